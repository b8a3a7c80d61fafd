// Root's clean-up after a user is removed (issue 39, item 12): the gatekeeper keeps
// per-uid state that outlives the account (docs/GATEKEEPER.md): the gate secret and
// generation under /var/lib/keygate/gate/UID, and the authentication records, failure
// counter and lockout in /run/keygate/ts/UID (and its .lock). A new account given the same uid would
// inherit them, and, while a process of the old account still runs, its kernel user
// keyring with any key cached there. `keygate forget-user UID` removes root's state and
// says which processes still hold the uid's keyring. Paths are GatekeeperPaths'.
internal import KeygateGateWire
internal import Glibc

public enum ForgetUser {
    /// What was done for one uid.
    public struct Outcome: Sendable {
        /// Root's paths that were there and were removed.
        public var removed: [String]
        /// Processes still running as the uid (their kernel keyring, and keys in it, live until they end).
        public var processes: [Int32]
    }

    /// Removes root's gatekeeper state for `uid`. Throws .param when the uid still has an account
    /// and `accountBeingRemoved` is false: its gated items would die with the state.
    public static func run(uid: UInt32, accountBeingRemoved: Bool, environment: KeygateEnvironment) throws -> Outcome {
        guard geteuid() == 0 else {
            throw KeychainError.param("keygate forget-user runs as root only (it removes root's state): run it with sudo")
        }
        if !accountBeingRemoved, let account = try? UserAccount.lookup(uid: uid) {
            throw KeychainError.param("""
                uid \(uid) is still the account \(account.name): forgetting it would invalidate every gated item of \(account.name). \
                Run this after userdel, or give --removing when the account is being removed (as from userdel's USERDEL_CMD)
                """)
        }
        var removed: [String] = []
        let records = GatekeeperPaths.recordPath(uid: uid, environment)
        for path in [GatekeeperPaths.stateDirectory(uid: uid, environment), records, records + ".lock"] {
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            try remove(path, info)
            removed.append(path)
        }
        return Outcome(removed: removed, processes: processes(of: uid))
    }

    /// Removes a file, or a folder and the files in it (root's folders are one level deep).
    private static func remove(_ path: String, _ info: stat) throws {
        if info.st_mode & S_IFMT == S_IFDIR, let dir = opendir(path) {
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != ".", name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names where unlink(path + "/" + name) != 0 {
                throw failure(path + "/" + name)
            }
            guard rmdir(path) == 0 else { throw failure(path) }
        } else if unlink(path) != 0 {
            throw failure(path)
        }
    }

    private static func failure(_ path: String) -> KeychainError {
        KeychainError.notAvailable("could not remove \(path): \(String(cString: strerror(errno))); remove it by hand (as root)")
    }

    /// The pids whose real uid is `uid`, from /proc/PID/status.
    private static func processes(of uid: UInt32) -> [Int32] {
        guard let dir = opendir("/proc") else { return [] }
        defer { closedir(dir) }
        var pids: [Int32] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), let status = FileProbe.readText("/proc/\(pid)/status", limit: 4096) else { continue }
            let uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
            if let real = uidLine?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first, UInt32(real) == uid {
                pids.append(pid)
            }
        }
        return pids.sorted()
    }
}
