// Everything one keychain operation needs to know about where it runs: the user,
// the data folder, the policy files and the keychain-wide policy they give, and how
// to reach PAM. Item-specific rules come from `decision(for:)`.
//
// Test hooks: debug builds take a few from the environment's TestHooks so the test suite
// can use a temporary PAM service folder, a cheap Argon2id cost and short windows. Release
// builds have none: an installed binary cannot be talked into a weaker configuration
// through its environment.
//
// A process that makes many operations (a library caller) builds the context once:
// `current()` reuses it while the environment, the uid and every policy folder and file
// (inode, size, times, owner, mode) are unchanged (KeychainContextCache).
import Synchronization

struct KeychainContext: Sendable {
    /// The calling user (real uid).
    let uid: UInt32
    /// Their home: $HOME when absolute, else the password database's (KeygatePaths.home).
    let home: String
    let dataDirectory: String
    /// The keychain-wide policy: lock-after and the unlock's PAM service and tries.
    let policy: Policy
    /// Every policy file that applies to this user (vendor, admin, user).
    let policies: PolicySet
    /// A folder of PAM service files to use instead of /etc/pam.d (tests only).
    let pamConfdir: String?
    /// A fixed Argon2id cost (tests only); nil means calibrate on this machine.
    let fixedKDF: KDFParameters?
    /// How long a Secret Service call may take before it fails as not available.
    let storeDeadline: Duration
    /// Test-only overrides applied on top of every policy decision.
    let overrides: TestOverrides
    /// The environment the edge built (KeygateEnvironment): what the layers below read, passed down.
    let environment: KeygateEnvironment

    static func current(environment: KeygateEnvironment) throws -> KeychainContext {
        try KeychainContextCache.shared.context(environment: environment) { try build(environment: environment) }
    }

    /// Builds the context from scratch: the user, the environment, every policy file.
    static func build(environment: KeygateEnvironment) throws -> KeychainContext {
        let hooks = environment.testHooks
        try hooks.check()
        let uid = ProcessIdentity.uid
        let home = try KeygatePaths.home(environment: environment, uid: uid)
        let confdir = hooks.pamConfdir
        let kdf: KDFParameters? = hooks.fastKDF ? .testing : nil
        let deadline = hooks.storeDeadline ?? .seconds(5)
        let overrides = hooks.overrides
        let policies = PolicySet.load(home: home, uid: uid, environment: environment)
        // A broken system policy file fails closed for items (decision(for:) throws);
        // the keychain-wide values then keep their safe defaults.
        var policy = (try? policies.keychainDecision().policy) ?? Policy.default
        overrides.apply(to: &policy)
        return KeychainContext(uid: uid, home: home, dataDirectory: KeygatePaths.dataDirectory(home: home, environment: environment),
                               policy: policy, policies: policies, pamConfdir: confdir, fixedKDF: kdf,
                               storeDeadline: deadline, overrides: overrides, environment: environment)
    }

    /// The rules for one item. Throws .notAvailable, naming the file, when a system
    /// policy file could not be read or parsed: access-controlled operations fail closed.
    func decision(for identity: ItemIdentity) throws -> PolicyDecision {
        let service = identity.itemClass == .genericPassword ? identity.service : identity.server
        var decision = try policies.decision(service: service, account: identity.account)
        overrides.apply(to: &decision.policy)
        // "default-access = none", "minimum-access = none"
        if decision.defaultAccess?.constraints.isEmpty == true { decision.defaultAccess = nil }
        if decision.minimumAccess?.constraints.isEmpty == true { decision.minimumAccess = nil }
        return decision
    }

    /// The same context with an item's policy in force.
    func with(policy: Policy) -> KeychainContext {
        KeychainContext(uid: uid, home: home, dataDirectory: dataDirectory, policy: policy, policies: policies,
                        pamConfdir: pamConfdir, fixedKDF: fixedKDF, storeDeadline: storeDeadline, overrides: overrides,
                        environment: environment)
    }

    /// The user's name, for audit lines and messages. It is looked up in the password database
    /// when first asked for, since a read with HOME set needs no more than the uid; a uid the
    /// database does not know is named by its number.
    var userName: String {
        (try? UserAccount.lookup(uid: uid).name) ?? "uid \(uid)"
    }

    /// The Argon2id cost for a new password protector.
    func kdfForNewProtector() throws -> KDFParameters {
        if let fixedKDF { return fixedKDF }
        return try KDFParameters.calibrate()
    }
}

/// How this process uses the keychain.
public enum KeychainProcess {
    /// The process runs one command and exits (the CLI): the keychain context (environment,
    /// policy files) is read once, and not fingerprinted for reuse.
    public static func runsOneCommand() {
        KeychainContextCache.shared.oneCommand.withLock { $0 = true }
    }
}

/// The process's last context, and what it was built from. Parsing the policy files,
/// copying the environment into a dictionary and reading the password database are 15%
/// of an in-process read's instructions; checking that nothing changed is a few stat calls.
final class KeychainContextCache: Sendable {
    static let shared = KeychainContextCache()

    private struct Entry {
        let uid: UInt32
        let environment: KeygateEnvironment
        let fingerprint: [Int64]
        let context: KeychainContext
    }

    private let entry = Mutex<Entry?>(nil)

    /// Set by a process that runs one command (the CLI: `KeychainProcess.runsOneCommand()`):
    /// its context is built once and kept for the process, so the policy folders are not
    /// read a second time for a fingerprint no later call would compare.
    let oneCommand = Mutex(false)

    func context(environment: KeygateEnvironment, building build: () throws -> KeychainContext) rethrows -> KeychainContext {
        let uid = ProcessIdentity.uid
        let once = oneCommand.withLock { $0 }
        if let hit = entry.withLock({ $0 }), hit.uid == uid, hit.environment == environment,
           once || Self.fingerprint(hit.context) == hit.fingerprint {
            return hit.context
        }
        // Taken before the files are read: a change while they are read shows next time.
        let context = try build()
        let fingerprint = once ? [] : Self.fingerprint(context)
        entry.withLock { $0 = fingerprint.map { Entry(uid: uid, environment: environment, fingerprint: $0, context: context) } }
        return context
    }

    /// Every policy folder and file the context read, as numbers; nil when one of them changed
    /// within the last 2 seconds (a file rewritten within one timestamp tick would look
    /// unchanged, so recent changes are never trusted: as git treats "racy" files).
    private static func fingerprint(_ context: KeychainContext) -> [Int64]? {
        let now = WallClock.realtimeSeconds
        var out: [Int64] = []
        for (_, folder) in PolicyLocations.folders(home: context.home, environment: context.environment) {
            let info: FileStatus
            switch FileStatus.of(folder, links: .follow) {
            case .success(let status): info = status
            case .failure(let e):
                out.append(-Int64(e.code))
                continue
            }
            guard append(info, to: &out, now: now) else { return nil }
            let listed = DirectoryNames.withNames(in: folder) { dir, names -> Bool in
                for name in names.sorted() {
                    guard case .success(let file) = FileStatus.of(name, in: dir, links: .refuse) else { return false }
                    out.append(Int64(name.hashValue))
                    guard append(file, to: &out, now: now) else { return false }
                }
                return true
            }
            guard case .success(true) = listed else { return nil }
        }
        return out
    }

    private static func append(_ info: FileStatus, to out: inout [Int64], now: Int) -> Bool {
        if info.modifiedSeconds >= now - 2 || info.changedSeconds >= now - 2 { return false }
        out += [Int64(info.device), Int64(info.inode), Int64(info.size), Int64(info.typeAndMode), Int64(info.uid),
                Int64(info.modifiedSeconds), Int64(info.modifiedNanoseconds), Int64(info.changedSeconds),
                Int64(info.changedNanoseconds)]
        return true
    }
}
