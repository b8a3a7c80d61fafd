// Everything one keychain operation needs to know about where it runs: the user,
// the data folder, the policy, and how to reach PAM. Built once per process.
//
// Test hooks: debug builds (KEYGATE_TEST_HOOKS) read a few KEYGATE_TEST_* variables
// so the test suite can use a temporary PAM service folder and a cheap Argon2id
// cost. Release builds compile the hooks out: an installed binary cannot be talked
// into a weaker configuration through its environment.

struct KeychainContext: Sendable {
    let user: UserAccount
    let dataDirectory: String
    let policy: Policy
    /// A folder of PAM service files to use instead of /etc/pam.d (tests only).
    let pamConfdir: String?
    /// A fixed Argon2id cost (tests only); nil means calibrate on this machine.
    let fixedKDF: KDFParameters?
    /// How long a Secret Service call may take before it fails as not available.
    let storeDeadline: Duration

    static func current() throws -> KeychainContext {
        let env = ProcessEnvironment.snapshot()
        let user = try UserAccount.current()
        var policy = Policy.default
        var confdir: String?
        var kdf: KDFParameters?
        var deadline = Duration.seconds(5)
        #if KEYGATE_TEST_HOOKS
        confdir = env["KEYGATE_TEST_PAM_CONFDIR"].flatMap { $0.isEmpty ? nil : $0 }
        if env["KEYGATE_TEST_KDF"] == "fast" { kdf = .testing }
        if let s = env["KEYGATE_TEST_LOCK_AFTER"], let v = UInt32(s) { policy.lockAfter = v }
        if let s = env["KEYGATE_TEST_STORE_DEADLINE"], let v = Int(s) { deadline = .seconds(v) }
        if let s = env["KEYGATE_TEST_REUSE_DURATION"], let v = UInt32(s) { policy.reuseDuration = v }
        if let s = env["KEYGATE_TEST_REUSE_SCOPE"], let v = ReuseScope.Kind(rawValue: s) { policy.reuseScope = v }
        if let s = env["KEYGATE_TEST_LOCKOUT_SECONDS"], let v = UInt32(s) { policy.lockoutSeconds = v }
        #endif
        return KeychainContext(user: user, dataDirectory: KeygatePaths.dataDirectory(for: user, environment: env),
                               policy: policy, pamConfdir: confdir, fixedKDF: kdf, storeDeadline: deadline)
    }

    /// The Argon2id cost for a new password protector.
    func kdfForNewProtector() throws -> KDFParameters {
        if let fixedKDF { return fixedKDF }
        return try KDFParameters.calibrate()
    }
}
