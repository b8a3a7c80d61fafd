// A Prompter that answers from a queue and counts what it was asked: the person
// at the prompt, scripted. PAM, the store and the keyring stay real around it.
import Foundation
import Keygate

public final class ScriptedPrompter: Prompter, @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String?]
    private var _prompts: [String] = []
    private var _notices: [String] = []
    private let available: Bool
    /// What ensureAvailable throws when the prompter is marked unavailable.
    public static let unavailableMessage = "a password is needed but there is no terminal and no askpass program"

    /// nil in `answers` means "the person cancels". An unavailable prompter behaves
    /// like a process with no terminal and no askpass program.
    public init(_ answers: [String?], available: Bool = true) {
        self.answers = answers
        self.available = available
    }

    public convenience init(answers: [String?]) { self.init(answers) }

    public var prompts: [String] { lock.withLock { _prompts } }
    public var notices: [String] { lock.withLock { _notices } }

    public func enqueue(_ answer: String?) { lock.withLock { answers.append(answer) } }

    public func readSecret(prompt: String) throws -> SecureBytes? {
        let next: String?? = lock.withLock {
            _prompts.append(prompt)
            return answers.isEmpty ? .some(nil) : answers.removeFirst()
        }
        guard let answer = next ?? nil else { return nil }
        var bytes = Array(answer.utf8)
        return try SecureBytes(consuming: &bytes)
    }

    public func notify(_ message: String) { lock.withLock { _notices.append(message) } }

    /// The person reads the secret: the test keeps what they saw (a copy a test may make).
    public func notify(_ before: String, secret: SecureBytes, _ after: String) {
        notify(before + String(decoding: secret.unprotectedCopy(), as: UTF8.self) + after)
    }

    public func ensureAvailable() throws {
        if !available { throw KeychainError(.interactionNotAllowed, ScriptedPrompter.unavailableMessage) }
    }
}
