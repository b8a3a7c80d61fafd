// Apple's LAContext over Keygate's AuthenticationContext. evaluatePolicy is a real PAM
// authentication through the `keygate` service (a finger through `keygate-biometry` for the
// biometric policy), run by the gatekeeper (AuthenticationContext.evaluate); the keys
// it unwraps then serve reads of access-controlled items that pass this context in
// kSecUseAuthenticationContext, without another prompt, until invalidate() or Keygate's
// context lifetime ends. localizedReason is the prompt's reason; interactionNotAllowed
// makes any read that would prompt fail with errSecInteractionNotAllowed.
internal import Keygate
import Synchronization

open class LAContext: NSObject, @unchecked Sendable {
    // @unchecked: every stored property is immutable or behind a Mutex.
    let authenticationContext = AuthenticationContext()
    private let state = Mutex(State())

    private struct State {
        var reuseDuration: TimeInterval = 0
        var fallbackTitle: String?
        var cancelTitle: String?
        var invalidated = false
    }

    public override init() {
        super.init()
    }

    /// The reason shown when a read through this context must ask for the password.
    open var localizedReason: String {
        get { authenticationContext.localizedReason ?? "" }
        set { authenticationContext.localizedReason = newValue.isEmpty ? nil : newValue }
    }

    /// Kept for Apple code; Keygate's prompts have no fallback or cancel button.
    open var localizedFallbackTitle: String? {
        get { state.withLock { $0.fallbackTitle } }
        set { state.withLock { $0.fallbackTitle = newValue } }
    }

    open var localizedCancelTitle: String? {
        get { state.withLock { $0.cancelTitle } }
        set { state.withLock { $0.cancelTitle = newValue } }
    }

    /// Capped at LATouchIDAuthenticationMaximumAllowableReuseDuration (300 s), as on Apple.
    /// Keygate's own reuse window (policy reuse-duration, kernel keyring) plays this role
    /// for reads; the value is kept and reported.
    open var touchIDAuthenticationAllowableReuseDuration: TimeInterval {
        get { state.withLock { $0.reuseDuration } }
        set { state.withLock { $0.reuseDuration = min(max(0, newValue), LATouchIDAuthenticationMaximumAllowableReuseDuration) } }
    }

    /// When true, a read through this context that would prompt fails with errSecInteractionNotAllowed,
    /// and evaluatePolicy fails with LAError.notInteractive.
    open var interactionNotAllowed: Bool {
        get { authenticationContext.interactionNotAllowed }
        set { authenticationContext.interactionNotAllowed = newValue }
    }

    /// `.touchID` when fprintd reports a fingerprint reader, else `.none` (as on Apple, whether or
    /// not a finger is enrolled).
    open var biometryType: LABiometryType { fingerprints().device == nil ? .none : .touchID }

    /// What fprintd reports for this user now (FingerprintState).
    func fingerprints() -> FingerprintState {
        FingerprintState.current(userName: (try? UserAccount.current().name) ?? "",
                                 environment: KeygateSecurityConfiguration.environment())
    }

    /// Whether `policy` can be evaluated; when not, `error` says why (LAErrorDomain).
    open func canEvaluatePolicy(_ policy: LAPolicy, error: UnsafeMutablePointer<NSError?>?) -> Bool {
        if let problem = unavailability(of: policy) {
            error?.pointee = problem.nsError
            return false
        }
        return true
    }

    /// Authenticates the user now (PAM, through the `keygate` service; a finger through the
    /// gatekeeper's biometric stack for .deviceOwnerAuthenticationWithBiometrics) and calls
    /// `reply` on a background queue, as Apple does.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String,
                             reply: @escaping @Sendable (Bool, (any Error)?) -> Void) {
        Task.detached {
            do {
                let ok = try await self.evaluatePolicy(policy, localizedReason: localizedReason)
                reply(ok, nil)
            } catch {
                reply(false, error)
            }
        }
    }

    /// The async form: true, or throws LAError.
    open func evaluatePolicy(_ policy: LAPolicy, localizedReason: String) async throws -> Bool {
        if let problem = unavailability(of: policy) { throw problem }
        if interactionNotAllowed {
            throw LAError(.notInteractive, message: "interactionNotAllowed is set on this LAContext, and authenticating needs a prompt")
        }
        let reason = localizedReason.isEmpty ? nil : localizedReason
        if let reason { authenticationContext.localizedReason = reason }
        do {
            try await authenticationContext.evaluate(prompter: KeygateSecurityConfiguration.currentPrompter(),
                                                     biometric: policy == .deviceOwnerAuthenticationWithBiometrics)
            return true
        } catch let e as KeychainError {
            throw LAError(Self.code(for: e), message: e.message)
        }
    }

    /// Wipes what this context holds; later evaluations and reads through it fail with
    /// invalidContext (evaluate) or prompt again (reads), as on Apple.
    open func invalidate() {
        state.withLock { $0.invalidated = true }
        authenticationContext.invalidate()
    }

    private func unavailability(of policy: LAPolicy) -> LAError? {
        if state.withLock({ $0.invalidated }) {
            return LAError(.invalidContext, message: "this LAContext was invalidated: create a new one")
        }
        switch policy {
        case .deviceOwnerAuthentication:
            let environment = KeygateSecurityConfiguration.environment()
            guard PAMStackProbe.serviceExists(environment: environment) else {
                return LAError(.passcodeNotSet, message: """
                    there is no `keygate` PAM service in \(PAMStackProbe.confdir(environment)): install Keygate's pam.d/keygate
                    """)
            }
            return nil
        case .deviceOwnerAuthenticationWithBiometrics:
            let state = fingerprints()
            guard let device = state.device else {
                return LAError(.biometryNotAvailable, message: state.problem ?? """
                    fprintd reports no fingerprint reader: use .deviceOwnerAuthentication, or connect a reader
                    """)
            }
            guard !state.enrolledFingers.isEmpty else {
                return LAError(.biometryNotEnrolled, message: "no finger is enrolled on \(device): enroll one with fprintd-enroll")
            }
            let environment = KeygateSecurityConfiguration.environment()
            if (try? EnrolledSetState.current(environment: environment))?.biometryLockedOut == true {
                return LAError(.biometryLockout, message: """
                    too many failed fingerprint matches: fingers are refused until you authenticate with your password once
                    """)
            }
            if let operations = try? KeychainOperations(prompter: RefusingPrompter(), environment: environment),
               let left = KeychainStatus(of: operations).lockoutSecondsLeft, left > 0 {
                return LAError(.biometryLockout, message: """
                    too many failed attempts: fingers are refused for \(left) more seconds
                    """)
            }
            return nil
        case .deviceOwnerAuthenticationWithWatch, .deviceOwnerAuthenticationWithBiometricsOrWatch,
             .deviceOwnerAuthenticationWithWristDetection:
            return LAError(.watchNotAvailable, message: "Linux has no paired watch: use .deviceOwnerAuthentication")
        }
    }

    /// Keygate's errors as LAError codes.
    static func code(for error: KeychainError) -> LAError.Code {
        switch error.code {
        case .authFailed: return .authenticationFailed
        case .userCanceled: return .userCancel
        case .interactionNotAllowed: return .notInteractive
        case .notAvailable, .itemNotFound, .duplicateItem, .param, .decode: return .systemCancel
        }
    }
}
