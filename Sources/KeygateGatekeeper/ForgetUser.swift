// Root's clean-up after a user is removed: the gatekeeper keeps per-uid state that outlives
// the account (docs/GATEKEEPER.md, "Root's state"): the gate secret and generation, the
// authentication records with the failure counter, the lockouts and the handles, the
// finger-unlock seed, pam_keygate's session counter, and the uid's audit record. A new account
// given the same uid would inherit them, and, while a process of the old account still runs,
// its kernel user keyring with any key cached there. `keygate forget-user UID` removes root's
// state (GatekeeperPaths.perUIDPaths, the one list), moves the audit record aside under a
// name no new account writes to, and says which processes still hold the uid's keyring.
// Root's code, in root's target: `keygate forget-user` (root) runs the installed gatekeeper
// with `--forget-user`, which the gatekeeper's main hands here when its real uid is root's.
import KeygateCore
import KeygateGateWire
import KeygateIdentity

enum ForgetUser {
    /// What was done for one uid.
    struct Outcome: Sendable {
        /// Root's paths that were there and were removed (an audit file: moved, and where to).
        var removed: [String]
        /// Processes still running as the uid (their kernel keyring, and keys in it, live until they end).
        var processes: [Int32]
        /// Keys Keygate had cached in the uid's kernel user keyring, dropped: the kernel keeps a uid's
        /// user keyring after its last process ends, and a new account given the uid would find them.
        var evictedKeys: Int = 0
    }

    /// `keygate-gatekeeper --forget-user [--removing] UID`, run by root: what `keygate forget-user`
    /// prints, on standard output; an error on standard error, and its exit status.
    static func main(_ arguments: [String], environment: KeygateEnvironment) -> Int32 {
        let removing = arguments.contains("--removing")
        let rest = arguments.filter { $0 != "--removing" }
        guard rest.count == 1, let text = rest.first, let uid = UInt32(text) else {
            _ = Descriptor.write("keygate-gatekeeper --forget-user: give the removed account's uid, a number\n", to: 2)
            return 2
        }
        do {
            let outcome = try run(uid: uid, accountBeingRemoved: removing, environment: environment)
            var out = outcome.removed.isEmpty ? "nothing of uid \(uid) to remove: the gatekeeper kept no state for it\n"
                : outcome.removed.map { "removed \($0)\n" }.joined()
            if outcome.evictedKeys > 0 {
                out += "dropped \(outcome.evictedKeys) key\(outcome.evictedKeys == 1 ? "" : "s") Keygate had cached in uid \(uid)'s kernel keyring\n"
            }
            if !outcome.processes.isEmpty {
                out += "still running as uid \(uid): \(outcome.processes.map(String.init).joined(separator: " ")); their kernel keyring "
                    + "(and any key cached in it) lasts until they end: pkill -KILL -u \(uid) before a new account gets uid \(uid)\n"
            }
            _ = Descriptor.write(out, to: 1)
            return 0
        } catch let error as KeychainError {
            _ = Descriptor.write("keygate: \(error.message)\n", to: 2)
            return error.exitCode
        } catch {
            _ = Descriptor.write("keygate: \(error)\n", to: 2)
            return 1
        }
    }

    /// Removes root's gatekeeper state for `uid`. Throws .param when the uid still has an account
    /// and `accountBeingRemoved` is false: its gated items would die with the state.
    static func run(uid: UInt32, accountBeingRemoved: Bool, environment: KeygateEnvironment) throws -> Outcome {
        guard ProcessIdentity.euid == 0 else {
            throw KeychainError.param("keygate forget-user runs as root only (it removes root's state): run it with sudo")
        }
        var account: UserAccount?
        if !accountBeingRemoved {
            do { account = try UserAccount.lookup(uid: uid) } catch {
                account = nil   // no entry in the password database: the account is gone, as after userdel
            }
        }
        if let account {
            throw KeychainError.param("""
                uid \(uid) is still the account \(account.name): forgetting it would invalidate every gated item of \(account.name). \
                Run this after userdel, or give --removing when the account is being removed (as from userdel's USERDEL_CMD)
                """)
        }
        var removed: [String] = []
        let stamp = WallClock.seconds
        for (path, isAudit) in GatekeeperPaths.perUIDPaths(uid: uid, environment) {
            guard case .success(let info) = FileStatus.of(path, links: .refuse) else { continue }
            if isAudit {
                removed.append(path + " (moved to " + (try retire(path, stamp: stamp, environment)) + ")")
            } else {
                try remove(path, info)
                removed.append(path)
            }
        }
        // As the uid (its user keyring is found through the caller's uid), with the overflow group: no account is left to name.
        let evicted = try UserIdentity.run(name: "uid \(uid)", uid: uid, gid: Self.overflowGID) { KeyCache(uid: uid).evictAll() }
        return Outcome(removed: removed, processes: processes(of: uid), evictedKeys: evicted)
    }

    /// The kernel's overflow group (nogroup), for acting as a uid that has no account.
    private static let overflowGID: UInt32 = 65534

    /// Moves one of the uid's audit files into the forgotten folder (root's, 0700), named by the uid
    /// and the time, so the record of the removed account is kept and a new account starts its own.
    private static func retire(_ path: String, stamp: Int, _ environment: KeygateEnvironment) throws -> String {
        let folder = GatekeeperPaths.auditForgottenFolder(environment)
        try GatekeeperPaths.makeFolder(folder, mode: 0o700)
        let target = folder + "/\(stamp)-" + (path.split(separator: "/").last.map(String.init) ?? "audit.log")
        if let e = FileSystem.rename(path, to: target) { throw failure(path, e) }
        return target
    }

    /// Removes a file, or a folder and the files in it (root's folders are one level deep).
    private static func remove(_ path: String, _ info: FileStatus) throws {
        if info.isDirectory, case .success(let names) = DirectoryNames.list(path) {
            for name in names {
                if let e = FileSystem.remove(path + "/" + name) { throw failure(path + "/" + name, e) }
            }
            if let e = FileSystem.removeFolder(path) { throw failure(path, e) }
        } else if let e = FileSystem.remove(path) {
            throw failure(path, e)
        }
    }

    private static func failure(_ path: String, _ e: SystemErrno) -> KeychainError {
        KeychainError.notAvailable("could not remove \(path): \(e.text); remove it by hand (as root)")
    }

    /// The pids whose real uid is `uid`, from /proc/PID/status.
    private static func processes(of uid: UInt32) -> [Int32] {
        guard case .success(let names) = DirectoryNames.list("/proc") else { return [] }
        var pids: [Int32] = []
        for name in names {
            guard let pid = Int32(name), let status = FileProbe.readText("/proc/\(pid)/status", limit: 4096) else { continue }
            let uidLine = status.split(separator: "\n").first { $0.hasPrefix("Uid:") }
            if let real = uidLine?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first, UInt32(real) == uid {
                pids.append(pid)
            }
        }
        return pids.sorted()
    }
}
