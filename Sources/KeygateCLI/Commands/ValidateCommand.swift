// `keygate validate` (and `keygate -v`), as `sudo -v`: reads no secret. The gatekeeper
// (root) extends this scope's presence window from now when an authentication in it is
// still fresh, with no prompt; else it asks for the password, as a gated read would, and
// opens the window. A locked keychain is opened by the same password; an unlocked one is
// held for its lock-after from now. Then items that need your password read without asking
// in this scope until the window ends (`keygate lock` ends it at once, like sudo -k).

import Keygate

enum ValidateCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Extend (or open, with your password) the window in which gated items read without asking, like sudo -v.",
        discussion: """
            No secret is read. Inside the reuse window of this scope (the policy's [default] reuse-duration and reuse-scope: \
            shipped, 300 s in this terminal) the window starts again from now, with no prompt; else keygate asks for your \
            password, as a gated read would, and opens the window (and unlocks a locked keychain with the same password). An \
            unlocked keychain stays unlocked for its lock-after from now. Items whose policy names another pam-service or \
            reuse-scope keep their own windows. `keygate -v` is the same, and `keygate lock` ends the window, like sudo -k. \
            Exit 51 when the password is refused, 36 when no prompt can be shown and there is no window to extend.
            """,
        options: GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operations = try context.operations(reason: "validate: let items that need your password read without asking")
        let done = try operations.validate()
        Console.err(message(done) + "\n")
        return 0
    }

    /// What the window now is, on stderr.
    static func message(_ done: KeychainOperations.Validation) -> String {
        guard done.reuseDuration > 0 else {
            return """
                keygate: validated, but the policy's reuse-duration is 0: each read of an item that needs your password still asks
                """
        }
        return "keygate: items that need your password read without asking \(scopeWords(done.reuseScope)) for \(done.reuseDuration) s; "
            + "`keygate lock` ends it"
    }

    /// The scope, in words.
    static func scopeWords(_ scope: ReuseScope.Kind) -> String {
        switch scope {
        case .tty: return "in this terminal"
        case .session: return "in this login session"
        case .ppid: return "for commands of this shell"
        case .global: return "in every session of yours"
        }
    }
}
