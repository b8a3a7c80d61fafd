// What the test suite's KEYGATE_TEST_* variables change in a policy: short windows and lockouts,
// applied by the keychain context and by the gatekeeper alike. TestHooks fills it in test-hook
// builds; release builds never do.

/// Short windows and lockouts for the test suite; empty (and never filled) in release builds.
package struct TestOverrides: Sendable, Equatable {
    package var lockAfter: UInt32?
    package var reuseDuration: UInt32?
    package var reuseScope: ReuseScope.Kind?
    package var lockoutSeconds: UInt32?
    package var fingerUnlock: UInt32?
    /// The gatekeeper's "a password within the last minute" (certify, fingerUnlockArm), shortened.
    package var certifyWindow: UInt32?

    package init() {}

    package func apply(to policy: inout Policy) {
        if let lockAfter { policy.lockAfter = lockAfter }
        if let reuseDuration { policy.reuseDuration = reuseDuration }
        if let reuseScope { policy.reuseScope = reuseScope }
        if let lockoutSeconds { policy.lockoutSeconds = lockoutSeconds }
        if let fingerUnlock { policy.fingerUnlock = fingerUnlock }
    }
}
