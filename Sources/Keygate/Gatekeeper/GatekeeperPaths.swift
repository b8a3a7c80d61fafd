// Where the gatekeeper keeps root's state (docs/GATEKEEPER.md): the per-user gate secrets
// under /var/lib/keygate/gate (they survive reboots; losing one invalidates that user's
// gated items, as losing the Secure Enclave would), the authentication records under
// /run/keygate/ts (tmpfs: gone at reboot, like sudo's /run/sudo/ts). Test-hook builds
// redirect both below KEYGATE_TEST_GATE_DIR; release builds always use the fixed paths.
internal import Glibc

enum GatekeeperPaths {
    static var stateRoot: String {
        #if KEYGATE_TEST_HOOKS
        if let dir = testRoot { return dir + "/state" }
        #endif
        return "/var/lib/keygate/gate"
    }

    static var recordRoot: String {
        #if KEYGATE_TEST_HOOKS
        if let dir = testRoot { return dir + "/ts" }
        #endif
        return "/run/keygate/ts"
    }

    static func stateDirectory(uid: UInt32) -> String { stateRoot + "/\(uid)" }
    static func recordPath(uid: UInt32) -> String { recordRoot + "/\(uid)" }

    #if KEYGATE_TEST_HOOKS
    static var testRoot: String? {
        guard let raw = getenv("KEYGATE_TEST_GATE_DIR") else { return nil }
        let dir = String(cString: raw)
        return dir.hasPrefix("/") ? dir : nil
    }
    #endif

    /// Makes `path` and its missing parents as root-owned folders of `mode`. A folder that
    /// exists must be a real folder (not a link) owned by the process's effective uid.
    static func makeFolder(_ path: String, mode: mode_t) throws {
        var prefix = ""
        for part in path.split(separator: "/") {
            prefix += "/" + part
            if mkdir(prefix, mode) != 0, errno != EEXIST {
                let e = errno
                throw KeychainError.notAvailable("the gatekeeper could not create \(prefix): \(String(cString: strerror(e)))")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR, info.st_uid == geteuid() else {
            throw KeychainError.notAvailable("\(path) is not a folder owned by uid \(geteuid()): remove it; the gatekeeper recreates it")
        }
    }
}
