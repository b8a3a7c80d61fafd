// `keygate lock` (and macOS's lock-keychain): drops the cached master key (like
// `sudo -k`); with --all (macOS: -a), every cached Keygate key including
// after-first-unlock (like `sudo -K`). A keychain argument is checked by KeychainArgument.

import Keygate

enum LockCommand: KeygateCommand {
    static let all = OptionSpec.flag("-a", "--all", help: "Also drop the after-first-unlock key, like sudo -K (macOS: lock all keychains).")

    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock: drop the master key and this scope's authentications (like sudo -k; --all like sudo -K).",
        discussion: """
            Alias lock-keychain, as on macOS: `lock-keychain -a` is --all, and a keychain argument may name only your one \
            keychain (login.keychain).
            """,
        aliases: ["lock-keychain"],
        options: [all] + GlobalOptions.all,
        positionals: [KeychainArgument.positional])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        try KeychainArgument.check(args, configuration, context)
        try context.operations().lock(all: args.flag(Self.all))
        return 0
    }
}
