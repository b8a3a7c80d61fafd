// macOS's find-generic-password / find-internet-password: prints the item's
// attribute block as macOS does (MacOSItemFormatter); with -g also the password on
// stderr as `password: "…"`; with -w only its secret (GetCommand).

import Keygate

enum FindCommand: KeygateCommand {
    static let passwordOnStderr = OptionSpec.flag("-g", help: "Also print the password on stderr, as macOS does (password: \"…\").")
    static let passwordOnly = OptionSpec.flag("-w", help: "Print only the secret.")

    static let configuration = CommandConfiguration(
        commandName: "find-generic-password",
        abstract: "Show an item's attributes as macOS does; -g adds the password on stderr, -w prints only the secret.",
        discussion: """
            The attribute block is macOS's (keychain:, version:, class:, attributes:); its keychain line names Keygate's data \
            folder ($XDG_DATA_HOME/keygate). -g prints `password: \"…\"` on stderr, or `password: 0x…` in hex when the secret \
            is not printable text, as macOS does.
            """,
        aliases: ["find-internet-password"],
        usage: "-s SERVICE [-a ACCOUNT] [-g | -w]",
        options: ItemOptions.matching + [
            passwordOnStderr,
            passwordOnly,
        ] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        if args.flag(Self.passwordOnly) {
            if args.flag(Self.passwordOnStderr) { throw context.usageError("-g and -w both print the password: give one", configuration) }
            return try GetCommand.run(args, context: context)
        }
        let operations = try context.operations()
        let identity = try ItemLookup.identity(args, configuration, context, operations)
        guard let attributes = try operations.attributes(matching: ItemQuery(exactly: identity)).first else {
            throw KeychainError(.itemNotFound, "no item for \(identity.displayName): list what exists with `keygate list`")
        }
        let block = MacOSItemFormatter.block(attributes, keychain: MacOSItemFormatter.keychainPath(context.environment))
        guard args.flag(Self.passwordOnStderr) else {
            Console.out(block)
            return 0
        }
        // Read first, so that a canceled authentication prints nothing, as on macOS.
        guard let secret = try operations.secret(for: identity) else {
            throw KeychainError(.itemNotFound, "no item for \(identity.displayName): list what exists with `keygate list`")
        }
        Console.out(block)
        try MacOSItemFormatter.writeSecret(secret, prefix: "password: ", toFileDescriptor: 2)
        return 0
    }
}
