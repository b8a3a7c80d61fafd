// What root's gatekeeper says about the user's enrolled fingers, for KeygateSecurity's
// LAContext: the enrolled set's domain state (evaluatedPolicyDomainState), a keyed hash of
// root's digest of the prints made by the gatekeeper, which changes exactly when a finger is
// enrolled, removed or enrolled again and reveals nothing of the digest; and the biometric
// lockout (canEvaluatePolicy's biometryLockout). Delegates to GateAccess; never prompts.

public struct EnrolledSetState: Sendable, Equatable {
    /// 32 bytes; nil when no finger is enrolled.
    public let domainState: [UInt8]?
    /// Fingers are refused until a password authentication succeeds (Apple's biometryLockout).
    public let biometryLockedOut: Bool

    /// The state now; throws when the gatekeeper cannot be asked (or its release does not know the question).
    /// `environment`: the caller's edge's (KeygateSecurity's configuration).
    public static func current(environment: KeygateEnvironment) throws -> EnrolledSetState {
        let state = try GateAccess(prompter: NeverPrompter(), authContext: nil, environment: environment).fingerprintState()
        return EnrolledSetState(domainState: state.domainState.isEmpty ? nil : state.domainState,
                                biometryLockedOut: state.biometryLockedOut)
    }
}
