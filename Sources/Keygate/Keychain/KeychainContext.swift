// Everything one keychain operation needs to know about where it runs: the user,
// the data folder, the policy files and the keychain-wide policy they give, and how
// to reach PAM. Item-specific rules come from `decision(for:)`.
//
// Test hooks: debug builds (KEYGATE_TEST_HOOKS) read a few KEYGATE_TEST_* variables
// so the test suite can use a temporary PAM service folder, a cheap Argon2id cost
// and short windows. Release builds compile the hooks out: an installed binary
// cannot be talked into a weaker configuration through its environment.

struct KeychainContext: Sendable {
    let user: UserAccount
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

    static func current() throws -> KeychainContext {
        let env = ProcessEnvironment.snapshot()
        let user = try UserAccount.current()
        var confdir: String?
        var kdf: KDFParameters?
        var deadline = Duration.seconds(5)
        var overrides = TestOverrides()
        #if KEYGATE_TEST_HOOKS
        confdir = env["KEYGATE_TEST_PAM_CONFDIR"].flatMap { $0.isEmpty ? nil : $0 }
        if env["KEYGATE_TEST_KDF"] == "fast" { kdf = .testing }
        if let s = env["KEYGATE_TEST_STORE_DEADLINE"], let v = Int(s) { deadline = .seconds(v) }
        overrides = TestOverrides(environment: env)
        #endif
        let policies = PolicySet.loadForCurrentUser(environment: env)
        // A broken system policy file fails closed for items (decision(for:) throws);
        // the keychain-wide values then keep their safe defaults.
        var policy = (try? policies.keychainDecision().policy) ?? Policy.default
        overrides.apply(to: &policy)
        return KeychainContext(user: user, dataDirectory: KeygatePaths.dataDirectory(for: user, environment: env),
                               policy: policy, policies: policies, pamConfdir: confdir, fixedKDF: kdf,
                               storeDeadline: deadline, overrides: overrides)
    }

    /// The rules for one item. Throws .notAvailable, naming the file, when a system
    /// policy file could not be read or parsed: access-controlled operations fail closed.
    func decision(for identity: ItemIdentity) throws -> PolicyDecision {
        let service = identity.itemClass == .genericPassword ? identity.service : identity.server
        var decision = try policies.decision(service: service, account: identity.account)
        overrides.apply(to: &decision.policy)
        if decision.access?.constraints.isEmpty == true { decision.access = nil }   // "access = none"
        return decision
    }

    /// The same context with an item's policy in force.
    func with(policy: Policy) -> KeychainContext {
        KeychainContext(user: user, dataDirectory: dataDirectory, policy: policy, policies: policies,
                        pamConfdir: pamConfdir, fixedKDF: fixedKDF, storeDeadline: storeDeadline, overrides: overrides)
    }

    /// The Argon2id cost for a new password protector.
    func kdfForNewProtector() throws -> KDFParameters {
        if let fixedKDF { return fixedKDF }
        return try KDFParameters.calibrate()
    }
}

/// Short windows and lockouts for the test suite; empty (and never filled) in release builds.
struct TestOverrides: Sendable {
    var lockAfter: UInt32?
    var reuseDuration: UInt32?
    var reuseScope: ReuseScope.Kind?
    var lockoutSeconds: UInt32?

    init() {}

    init(environment env: [String: String]) {
        lockAfter = env["KEYGATE_TEST_LOCK_AFTER"].flatMap { UInt32($0) }
        reuseDuration = env["KEYGATE_TEST_REUSE_DURATION"].flatMap { UInt32($0) }
        reuseScope = env["KEYGATE_TEST_REUSE_SCOPE"].flatMap { ReuseScope.Kind(rawValue: $0) }
        lockoutSeconds = env["KEYGATE_TEST_LOCKOUT_SECONDS"].flatMap { UInt32($0) }
    }

    func apply(to policy: inout Policy) {
        if let lockAfter { policy.lockAfter = lockAfter }
        if let reuseDuration { policy.reuseDuration = reuseDuration }
        if let reuseScope { policy.reuseScope = reuseScope }
        if let lockoutSeconds { policy.lockoutSeconds = lockoutSeconds }
    }
}
