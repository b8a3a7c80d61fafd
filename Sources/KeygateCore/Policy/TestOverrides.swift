// What the test suite's KEYGATE_TEST_* variables change in a policy: short windows and lockouts,
// read by the keychain context and by the gatekeeper alike. Test-hook builds fill it from the
// environment; release builds never do (KeychainContext and GatekeeperMain read it under
// KEYGATE_TEST_HOOKS only).

/// Short windows and lockouts for the test suite; empty (and never filled) in release builds.
package struct TestOverrides: Sendable {
    package var lockAfter: UInt32?
    package var reuseDuration: UInt32?
    package var reuseScope: ReuseScope.Kind?
    package var lockoutSeconds: UInt32?
    package var fingerUnlock: UInt32?
    /// The gatekeeper's "a password within the last minute" (certify, fingerUnlockArm), shortened.
    package var certifyWindow: UInt32?

    package init() {}

    package init(environment env: [String: String]) {
        lockAfter = env["KEYGATE_TEST_LOCK_AFTER"].flatMap { UInt32($0) }
        reuseDuration = env["KEYGATE_TEST_REUSE_DURATION"].flatMap { UInt32($0) }
        reuseScope = env["KEYGATE_TEST_REUSE_SCOPE"].flatMap { ReuseScope.Kind(rawValue: $0) }
        lockoutSeconds = env["KEYGATE_TEST_LOCKOUT_SECONDS"].flatMap { UInt32($0) }
        fingerUnlock = env["KEYGATE_TEST_FINGER_UNLOCK"].flatMap { UInt32($0) }
        certifyWindow = env["KEYGATE_TEST_CERTIFY_WINDOW"].flatMap { UInt32($0) }
    }

    package func apply(to policy: inout Policy) {
        if let lockAfter { policy.lockAfter = lockAfter }
        if let reuseDuration { policy.reuseDuration = reuseDuration }
        if let reuseScope { policy.reuseScope = reuseScope }
        if let lockoutSeconds { policy.lockoutSeconds = lockoutSeconds }
        if let fingerUnlock { policy.fingerUnlock = fingerUnlock }
    }
}
