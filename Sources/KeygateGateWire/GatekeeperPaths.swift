// Where the gatekeeper keeps root's state (docs/GATEKEEPER.md): the per-user gate secrets
// under /var/lib/keygate/gate (they survive reboots; losing one invalidates that user's
// gated items, as losing the Secure Enclave would), the authentication records under
// /run/keygate/ts (tmpfs: gone at reboot, like sudo's /run/sudo/ts), the daemon's socket
// and lock in /run/keygate. Test-hook builds redirect the state below KEYGATE_TEST_GATE_DIR
// and give each set of test hooks its own daemon; release builds always use the fixed paths.
// The hooks come from the KeygateEnvironment the caller passes down (TestHooks), never from the process.
import KeygateCore

package enum GatekeeperPaths {
    // The paths a test-hook build may redirect are functions of the environment the caller's
    // edge built (KeygateEnvironment): the gatekeeper's main, the client's keychain context.

    package static func stateRoot(_ environment: KeygateEnvironment) -> String {
        if let dir = testRoot(environment) { return dir + "/state" }
        return "/var/lib/keygate/gate"
    }

    package static func recordRoot(_ environment: KeygateEnvironment) -> String {
        if let dir = testRoot(environment) { return dir + "/ts" }
        return "/run/keygate/ts"
    }

    /// Root's folder in /run: 0711 (users pass through it to the socket, and list nothing).
    package static let runRoot = "/run/keygate"
    /// The daemon's folder, 0755 root: its socket is for every user; only root can create it.
    package static let socketFolder = runRoot + "/gate"

    /// The daemon's socket (GateDaemon).
    package static func socketPath(_ environment: KeygateEnvironment) -> String {
        socketFolder + "/" + daemonName(environment) + ".sock"
    }
    /// Held (flock) by the daemon that listens on `socketPath`, for as long as it runs.
    package static func daemonLockPath(_ environment: KeygateEnvironment) -> String {
        socketFolder + "/" + daemonName(environment) + ".lock"
    }

    private static func daemonName(_ environment: KeygateEnvironment) -> String {
        // One daemon per set of test hooks: a test's hooks never reach another's calls.
        guard let hooks = environment.testHooks.daemonIdentity else { return "gate" }
        let digest = GenericHash.publicDigest(Array(hooks.utf8), key: Array("keygate.gate.test-daemon".utf8), outputBytes: 16)
        return "gate-test-" + digest.map { String($0 >> 4, radix: 16) + String($0 & 0xf, radix: 16) }.joined()
    }

    /// Root's own audit record of the gatekeeper's decisions (GateAuditFile), 0600 in a 0700 folder.
    package static func auditFolder(_ environment: KeygateEnvironment) -> String {
        if let dir = testRoot(environment) { return dir + "/log" }
        return "/var/log/keygate"
    }
    package static func auditPath(_ environment: KeygateEnvironment) -> String { auditFolder(environment) + "/gatekeeper.log" }

    package static func stateDirectory(uid: UInt32, _ environment: KeygateEnvironment) -> String {
        stateRoot(environment) + "/\(uid)"
    }
    package static func recordPath(uid: UInt32, _ environment: KeygateEnvironment) -> String {
        recordRoot(environment) + "/\(uid)"
    }

    /// KEYGATE_TEST_GATE_DIR, in test-hook builds; always nil in release builds.
    package static func testRoot(_ environment: KeygateEnvironment) -> String? {
        environment.testHooks.gateDirectory
    }

    /// Makes `path` and its missing parents as root-owned folders of `mode`. A folder that
    /// exists must be a real folder (not a link) owned by the process's effective uid; one that an
    /// earlier gatekeeper made with its caller's group is given root's group.
    package static func makeFolder(_ path: String, mode: UInt32) throws {
        // The common case, one call: it is there, a real folder, ours (the daemon asks on every request).
        if case .success(let info) = FileStatus.of(path, links: .refuse), info.isDirectory, info.uid == ProcessIdentity.euid {
            if info.gid != ProcessIdentity.egid {
                FileSystem.changeOwner(path, uid: ProcessIdentity.euid, gid: ProcessIdentity.egid, links: .refuse)
            }
            return
        }
        var prefix = ""
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if let e = FileSystem.makeFolder(prefix, mode: mode), e != .exists {
                throw KeychainError.notAvailable("the gatekeeper could not create \(prefix): \(e.text)")
            }
        }
        guard case .success(let info) = FileStatus.of(path, links: .refuse), info.isDirectory, info.uid == ProcessIdentity.euid else {
            throw KeychainError.notAvailable("\(path) is not a folder owned by uid \(ProcessIdentity.euid): remove it; the gatekeeper recreates it")
        }
    }
}
