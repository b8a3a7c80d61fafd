// `keygate lookup` (secret-tool lookup): prints the secret of the one item whose
// attributes match (SecretToolAttributes), exactly as `get` prints it, through the
// normal read path (KeychainOperations.secret), so the item's access control applies. An item
// another program stored in the Secret Service (secret-tool store) has none, and is read as
// secret-tool reads it (KeychainOperations.foreignItems) when no Keygate item matches.

import Keygate

enum LookupCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Print the secret of the item whose attributes match (secret-tool lookup order).",
        discussion: """
            `keygate lookup service vpn account alice`, as secret-tool. Exit status: 44 when nothing matches (secret-tool exits \
            1; both are non-zero, so `lookup … || fallback` works), 206 when several items match (secret-tool returns one of \
            them; Keygate asks for more attributes instead).
            """,
        usage: "ATTRIBUTE VALUE [ATTRIBUTE VALUE]…",
        options: [SearchCommand.attr] + GlobalOptions.all,
        positionals: [SecretToolAttributes.pairs])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let attributes = try SecretToolAttributes(args, configuration, context)
        try attributes.requireSome("lookup", configuration, context)
        let operations = try context.operations()
        let matches = try attributes.items(in: operations)
        guard let first = matches.first else {
            // An item secret-tool (or another libsecret program) stored: read as secret-tool reads it.
            let foreign = try operations.foreignItems(matching: attributes.asGiven)
            guard let item = foreign.first else {
                throw KeychainError(.itemNotFound, "no item matches: list what exists with `keygate list`")
            }
            guard foreign.count == 1 else {
                throw KeychainError(.param, "\(foreign.count) items match: add an attribute to name one (see `secret-tool search`)")
            }
            try item.secret.write(toFileDescriptor: 1)
            if Console.isTerminal(1) { Console.out("\n") }
            return 0
        }
        guard matches.count == 1 else {
            throw KeychainError(.param, "\(matches.count) items match: add an attribute (account NAME) to name one (see `keygate search`)")
        }
        guard let secret = try operations.secret(for: first.identity) else {
            throw KeychainError(.itemNotFound, "no item for \(first.identity.displayName): list what exists with `keygate list`")
        }
        try secret.write(toFileDescriptor: 1)
        if Console.isTerminal(1) { Console.out("\n") }
        return 0
    }
}
