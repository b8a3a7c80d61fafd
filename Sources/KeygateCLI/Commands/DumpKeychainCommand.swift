// macOS's dump-keychain: the attribute block (MacOSItemFormatter) of every item, never a
// secret. With -d, each item's secret follows as macOS prints it (`data:` and the value),
// read through KeychainOperations.secret, so each item's access control applies: a
// locked keychain asks for the password, a presence item for a presence check.

import Keygate

enum DumpKeychainCommand: KeygateCommand {
    static let withData = OptionSpec.flag("-d", help: "Also print each item's secret (`data:`), after the authentication it needs.")

    static let configuration = CommandConfiguration(
        commandName: "dump-keychain",
        abstract: "Print every item's attributes as macOS does; -d also its secret, after the authentication it needs.",
        discussion: """
            Without -d nothing is decrypted and nothing prompts. With -d each secret is read as `keygate get` reads it: the \
            keychain unlocks through PAM, and a presence-gated item asks for a presence check. An item that can no longer be \
            read (invalidated) is shown without data, with the reason on stderr, and the exit status is then that of the failed \
            read.
            """,
        usage: "[-d] [KEYCHAIN]",
        options: [withData] + GlobalOptions.all,
        positionals: [KeychainArgument.positional])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        try KeychainArgument.check(args, configuration, context)
        let withData = args.flag(Self.withData)
        let operations = try context.operations()
        let keychain = MacOSItemFormatter.keychainPath(context.environment)
        var status: Int32 = 0
        for item in try operations.inventory.listing(matching: ItemQuery()) {
            Console.out(MacOSItemFormatter.block(item.attributes, keychain: keychain))
            guard withData else { continue }
            if let reason = item.invalidated {
                Console.err("keygate: \(item.attributes.identity.displayName) is invalidated (\(reason)): no data\n")
                status = KeychainError(.itemNotFound, "").exitCode
                continue
            }
            guard let secret = try operations.secret(for: item.attributes.identity) else { continue }
            try MacOSItemFormatter.writeSecret(secret, prefix: "data:\n", toFileDescriptor: 1)
        }
        return status
    }
}
