// What every CLI verb is: a static configuration (name, abstract, options) and a
// run function over parsed arguments. The dispatcher in KeygateMain picks the
// verb; the verb calls KeychainOperations and prints.

import Keygate

protocol KeygateCommand: Sendable {
    static var configuration: CommandConfiguration { get }
    /// Runs the verb and returns the process exit status. Errors thrown are
    /// KeychainError (exit status & 0xFF) or UsageError (exit 2).
    static func run(_ arguments: ParsedArguments, context: CommandContext) throws -> Int32
}

/// Options every verb accepts.
enum GlobalOptions {
    static let askpass = OptionSpec.value("--askpass", valueName: "PROG",
                                          help: """
                                              Ask for passwords with PROG (ssh-askpass semantics: the prompt is argv[1], the answer is read from \
                                              its stdout). Also KEYGATE_ASKPASS.
                                              """)
    static let verbose = OptionSpec.flag("--verbose", help: """
        Also print the audit lines (authentications, unlocks, locks, policy refusals) on stderr.
        """)
    static let pinentry = OptionSpec.flag("--pinentry", help: """
        Ask for passwords with your pinentry (KEYGATE_PINENTRY, else `pinentry` on PATH): curses, GNOME or Qt. Setting \
        KEYGATE_PINENTRY does the same.
        """)
    static let all: [OptionSpec] = [askpass, pinentry, verbose]
    /// Before the verb only.
    static let noUnlockPrompt = OptionSpec.flag("--no-unlock-prompt", help: """
        Never show the Secret Service's unlock window: a locked collection that needs a password exits 36 at once \
        (one that needs none still opens, as with secret-tool). Also KEYGATE_UNLOCK_PROMPT=never.
        """)

}

/// What a verb needs from the process: how to prompt, and a way to build operations.
struct CommandContext {
    let programName: String
    /// The environment the CLI's main read once (KeygateEnvironment), passed down to every layer.
    let configuration: KeygateEnvironment
    /// The same value, under the name the verbs pass down.
    var environment: KeygateEnvironment { configuration }
    let askpass: String?
    var pinentry = false
    /// argv's bytes after the program name, as the kernel gave them (empty when the CLI was run
    /// from Strings): `keygate exec` passes its command's arguments on byte for byte.
    var rawArguments: [[UInt8]] = []
    /// --no-unlock-prompt: never the Secret Service's unlock window (nil: KEYGATE_UNLOCK_PROMPT decides).
    var unlockPrompt: UnlockPromptSetting? = nil

    var prompter: SystemPrompter { SystemPrompter(askpass: askpass, environment: environment, pinentry: pinentry) }

    func operations(reason: String? = nil) throws -> KeychainOperations {
        try KeychainOperations(prompter: prompter, reason: reason, unlockPrompt: unlockPrompt, environment: configuration)
    }

    /// For the verbs a script calls to look (list, exists, doctor): never the Secret Service's unlock
    /// window, whatever the setting, so a script never waits on a window. A locked collection
    /// exits 36 with the provider's advice; items a provider locks one by one are listed from
    /// their attributes, which need no unlock.
    func lookingOnly() -> CommandContext {
        var context = self
        context.unlockPrompt = .never
        return context
    }

    /// Asks for the recovery key shown at init; `ifCanceled` says what did not happen.
    func readRecoveryKey(ifCanceled: String) throws -> SecureBytes {
        let prompter = self.prompter
        try prompter.ensureAvailable()
        guard let key = try prompter.readSecret(prompt: "Recovery key: ") else {
            throw KeychainError(.userCanceled, "canceled: \(ifCanceled)")
        }
        return key
    }

    func usageError(_ message: String, _ configuration: CommandConfiguration) -> UsageError {
        UsageError(message: message, usage: HelpFormatter.usageLine(for: configuration, programName: programName))
    }
}
