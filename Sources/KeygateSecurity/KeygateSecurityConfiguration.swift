// How the SecItem functions and LAContext ask a person for the password: the process's
// default (Keygate's SystemPrompter: the controlling terminal, or KEYGATE_ASKPASS), or,
// for tests only, a prompter set through `@testable import KeygateSecurity`. Apple code
// has no way to name a prompter, so this seam is internal on purpose. Delegates asking
// to Keygate's Prompter implementations.
//
// It is also the Apple layer's edge for the environment: each SecItem call and LAContext
// question reads the process environment here, once (KeygateEnvironment), and passes it down:
// the access groups (KEYGATE_ACCESS_GROUPS), the prompter, the operations.
internal import Keygate
import Synchronization

enum KeygateSecurityConfiguration {
    private static let override = Mutex<(any Prompter)?>(nil)

    /// A prompter that replaces the default for the whole process (tests script answers with it).
    static var prompter: (any Prompter)? {
        get { override.withLock { $0 } }
        set { override.withLock { $0 = newValue } }
    }

    /// The process's environment, read at this edge (once per SecItem call or LAContext question).
    static func environment() -> KeygateEnvironment {
        KeygateEnvironment.process()
    }

    /// The prompter a call uses: the override, else the system's.
    static func currentPrompter(_ environment: KeygateEnvironment = environment()) -> any Prompter {
        prompter ?? SystemPrompter(environment: environment)
    }

    /// Operations for one SecItem call: its reason (kSecUseOperationPrompt), its context
    /// (kSecUseAuthenticationContext), and no prompt at all under kSecUseAuthenticationUIFail/Skip.
    static func operations(for query: SecItemQuery) throws -> KeychainOperations {
        let prompter: any Prompter = query.authenticationUI == .allow ? currentPrompter(query.environment) : RefusingPrompter()
        return try KeychainOperations(prompter: prompter, reason: query.operationPrompt,
                                      context: query.context?.authenticationContext, environment: query.environment)
    }
}

/// The prompter of kSecUseAuthenticationUIFail and Skip: any need to ask is
/// errSecInteractionNotAllowed, at once.
struct RefusingPrompter: Prompter {
    private static let message = """
        the item needs your password, and the query says kSecUseAuthenticationUIFail (or Skip): allow the prompt, or \
        authenticate first with LAContext.evaluatePolicy and pass the context in kSecUseAuthenticationContext
        """

    func readSecret(prompt: String) throws -> SecureBytes? {
        throw KeychainError(.interactionNotAllowed, Self.message)
    }

    func notify(_ message: String) {}

    func ensureAvailable() throws {
        throw KeychainError(.interactionNotAllowed, Self.message)
    }
}
