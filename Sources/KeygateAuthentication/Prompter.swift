// The one way Keygate obtains a secret from a person. The core never prompts on its
// own: callers pass a Prompter (SystemPrompter for a terminal or askpass program, or
// their own). Implementations live next to this file; PAMConversation drives them.
import KeygateCore

/// Obtains secrets from a person. The core never prompts on its own: callers pass a Prompter.
public protocol Prompter: Sendable {
    /// Asks without echo. Returns nil when the person cancels (EOF/Ctrl-D at the terminal, askpass exit != 0).
    func readSecret(prompt: String) throws -> SecureBytes?
    /// Shows a one-line notice, e.g. "Sorry, try again." (terminal: to /dev/tty; askpass: stderr).
    func notify(_ message: String)
    /// Shows a notice with a secret inside it (the recovery key a first write's implicit init made):
    /// `before`, the secret's bytes written straight from locked memory, never through a String,
    /// then `after` and a newline. Without an implementation of its own: to stderr.
    func notify(_ before: String, secret: SecureBytes, _ after: String)
    /// Throws .interactionNotAllowed AT ONCE when no prompt can be shown.
    func ensureAvailable() throws
}

extension Prompter {
    public func notify(_ before: String, secret: SecureBytes, _ after: String) {
        PromptNotice.write(before, secret: secret, after, to: 2)
    }
}

/// How a notice with a secret reaches a descriptor: three writes, the middle one from locked memory.
package enum PromptNotice {
    package static func write(_ before: String, secret: SecureBytes, _ after: String, to fd: Int32) {
        _ = Descriptor.write(before, to: fd)
        secret.withUnsafeBytes { _ = SafeFile.writeAll(fd, $0) }
        _ = Descriptor.write(after + "\n", to: fd)
    }
}

enum PromptAdvice {
    /// The message of `.interactionNotAllowed` when neither a terminal nor an askpass program is there.
    static let noPrompt = "a password is needed but there is no terminal and no askpass program: "
        + "run from a terminal, set KEYGATE_ASKPASS, or pass --askpass PROG"

    /// The longest answer Keygate accepts from a person (terminal line or askpass output).
    static let maxAnswerBytes = 4096
}

/// A prompter that never asks: a question the gatekeeper or a store would put to the person is
/// errSecInteractionNotAllowed with `message`. For requests that need no prompt (the enrolled
/// set's state, status) made where no prompter was given.
package struct NeverPrompter: Prompter {
    let message: String

    package init(_ message: String = "this needs no prompt, and none is allowed") { self.message = message }

    package func readSecret(prompt: String) throws -> SecureBytes? { throw KeychainError.interactionNotAllowed(message) }
    package func notify(_ message: String) {}
    package func notify(_ before: String, secret: SecureBytes, _ after: String) {}
    package func ensureAvailable() throws { throw KeychainError.interactionNotAllowed(message) }
}
