// The rest of LAContext's surface a keychain wrapper may call: evaluateAccessControl for
// item operations (an authentication through the same PAM path as evaluatePolicy, since
// Keygate's access control is PAM), evaluatedPolicyDomainState (a value derived by root
// from the enrolled prints, after a biometric evaluation), and setCredential (refused:
// Keygate never takes a password from the app). Key operations are refused with
// errSecUnimplemented. Delegates to LAContext.evaluatePolicy.

internal import Keygate

/// Apple's `LACredentialType`.
public enum LACredentialType: Int, Sendable {
    case applicationPassword = 0
    case smartCardPIN = -3
}

/// Apple's `LAAccessControlOperation`.
public enum LAAccessControlOperation: Int, Sendable {
    case createItem = 0
    case useItem = 1
    case createKey = 2
    case useKeySign = 3
    case useKeyDecrypt = 4
    case useKeyKeyExchange = 5
}

extension LAContext {
    /// 32 bytes that change exactly when a finger is enrolled, removed or enrolled again: the
    /// gatekeeper's keyed hash of root's digest of the prints (EnrolledSetState), which does not
    /// reveal it. nil with no finger enrolled, or when the gatekeeper cannot be asked, as Apple
    /// gives nil without biometry. (Apple sets it only once a biometric policy was evaluated on
    /// the context; Keygate answers at once: the value is the same either way.)
    public var evaluatedPolicyDomainState: Data? {
        guard let state = try? EnrolledSetState.current(environment: KeygateSecurityConfiguration.environment()).domainState else { return nil }
        return Data(state)
    }

    /// Refused (false): the password is always asked by PAM, never handed over by the app.
    public func setCredential(_ credential: Data?, type: LACredentialType) -> Bool {
        SecLastFailure.record(errSecUnimplemented, "LAContext.setCredential is not supported: Keygate asks for the password through PAM itself")
        return false
    }

    /// Authenticates for an item operation under `accessControl`: nothing to do when it
    /// names no constraint, else a PAM authentication as evaluatePolicy does (a finger for a
    /// finger-only item), whose
    /// context then serves reads of such items. Key operations are errSecUnimplemented.
    public func evaluateAccessControl(_ accessControl: SecAccessControl, operation: LAAccessControlOperation,
                                      localizedReason: String) async throws -> Bool {
        switch operation {
        case .createItem, .useItem:
            guard let flags = accessControl.accessControl else { return true }
            // A finger-only item (biometryAny, biometryCurrentSet) is served by a finger's authentication.
            let policy: LAPolicy = flags.asksForFingerOnly ? .deviceOwnerAuthenticationWithBiometrics : .deviceOwnerAuthentication
            return try await evaluatePolicy(policy, localizedReason: localizedReason)
        case .createKey, .useKeySign, .useKeyDecrypt, .useKeyKeyExchange:
            throw NSError(domain: NSOSStatusErrorDomain, code: Int(errSecUnimplemented),
                          userInfo: [NSLocalizedDescriptionKey: SecUnimplemented.message])
        }
    }

    /// The reply form, called on a background queue as Apple does.
    public func evaluateAccessControl(_ accessControl: SecAccessControl, operation: LAAccessControlOperation,
                                      localizedReason: String, reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        Task.detached {
            do {
                reply(try await self.evaluateAccessControl(accessControl, operation: operation, localizedReason: localizedReason), nil)
            } catch {
                reply(false, error)
            }
        }
    }
}
