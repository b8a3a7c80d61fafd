// macOS's show-keychain-info: one line on the keychain's lock settings, in macOS's
// words. Keygate locks after the policy's idle time (lock-after) and never on sleep,
// so the line is `Keychain "PATH" timeout=900s`. A keychain argument may name only the
// user's one keychain (KeychainArgument).

import Keygate

enum ShowKeychainInfoCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "show-keychain-info",
        abstract: "Print the keychain's lock settings as macOS does: Keychain \"PATH\" timeout=SECONDSs.",
        discussion: "The timeout is the policy's lock-after (the idle lock); Keygate does not lock on sleep.",
        options: GlobalOptions.all,
        positionals: [KeychainArgument.positional])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        try KeychainArgument.check(args, configuration, context)
        let status = KeychainStatus(of: try context.operations())
        Console.out("Keychain \"\(MacOSItemFormatter.keychainPath(context.environment))\" timeout=\(status.lockAfter)s\n")
        return 0
    }
}
