// How a prompt is cancelled when its client leaves the bus mid-prompt: the loop sets the flag
// (SecretServiceHost.clientLeft), and the prompter the worker asks through (CancellablePrompter)
// answers every question after it as the person's cancel, and drops an answer that arrives after
// the cancel (a window already open stays until the person closes it, and what they type there
// opens nothing). PAM then hears a cancel: the gatekeeper gives the attempt back, opens nothing,
// and the prompt ends dismissed.
import Keygate
import KeygateCore
import Synchronization

package final class PromptCancellation: Sendable {
    private let state = Mutex(false)

    package init() {}

    package func cancel() { state.withLock { $0 = true } }

    package var isCancelled: Bool { state.withLock { $0 } }
}

/// A prompter that stops asking once its prompt is cancelled.
struct CancellablePrompter: Prompter {
    let base: any Prompter
    let cancellation: PromptCancellation

    func readSecret(prompt: String) throws -> SecureBytes? {
        guard !cancellation.isCancelled else { return nil }
        let answer = try base.readSecret(prompt: prompt)
        // An answer typed after the client left opens nothing.
        return cancellation.isCancelled ? nil : answer
    }

    func notify(_ message: String) {
        guard !cancellation.isCancelled else { return }
        base.notify(message)
    }

    func ensureAvailable() throws {
        if cancellation.isCancelled { throw KeychainError.userCanceled("the client left the bus before the prompt ended") }
        try base.ensureAvailable()
    }
}
