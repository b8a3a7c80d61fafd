// `keygate get`: writes an item's secret to stdout, exactly as stored, adding a
// newline only when stdout is a terminal. Prompts through PAM if locked.

import Keygate

enum GetCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print an item's secret (exact bytes; a newline only on a terminal).",
        discussion: "With only -s, the one item of that service is used; if several match, give -a. Unlocks the keychain through PAM when needed.",
        usage: "-s SERVICE [-a ACCOUNT] [--internet …]",
        options: ItemOptions.matching + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operations = try context.operations()
        var identity = try ItemLookup.identity(args, configuration, context, operations)
        var found = try operations.secret(for: identity)
        if found == nil, let grouped = try ItemLookup.inAnAccessGroup(identity, operations) {
            identity = grouped
            found = try operations.secret(for: grouped)
        }
        guard let secret = found else {
            if let damage = try operations.inventory.damage(of: identity) { throw KeychainError(.itemNotFound, damage) }
            throw KeychainError(.itemNotFound, "no item for \(identity.displayName): list what exists with `keygate list`")
        }
        try secret.write(toFileDescriptor: 1)
        if Console.isTerminal(1) { Console.out("\n") }
        return 0
    }
}

/// Resolving -s [-a] to exactly one item, as Apple's kSecMatchLimitOne does.
enum ItemLookup {
    static func identity(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext,
                         _ operations: KeychainOperations) throws -> ItemIdentity {
        if args.value(ItemOptions.account) != nil, args.value(ItemOptions.service) != nil, !args.flag(ItemOptions.internet) {
            return try ItemOptions.identity(args, config, context)
        }
        guard args.value(ItemOptions.service) != nil else { throw context.usageError("\(config.commandName) needs -s SERVICE", config) }
        let matches = try operations.attributes(matching: try ItemOptions.query(args, config, context))
        guard let first = matches.first else {
            throw KeychainError(.itemNotFound, "no item matches: list what exists with `keygate list`")
        }
        guard matches.count == 1 else {
            throw KeychainError(.param, "\(matches.count) items match: name one with -a ACCOUNT (see `keygate list`)")
        }
        return first.identity
    }

    /// The item a program stored in an access group under the name -s/-a give, when no item in
    /// no group has it: the CLI declares no groups, so, as on Apple, a query without a group sees
    /// every group. Only read after the item in no group was missed, so a plain read asks nothing more.
    static func inAnAccessGroup(_ identity: ItemIdentity, _ operations: KeychainOperations) throws -> ItemIdentity? {
        guard identity.accessGroup.isEmpty else { return nil }
        var query = ItemQuery(exactly: identity)
        query.accessGroup = nil
        let found = try operations.attributes(matching: query)
        guard found.count <= 1 else {
            let groups = found.compactMap(\.accessGroup).joined(separator: ", ")
            throw KeychainError(.param, """
                \(found.count) items for \(identity.displayName), in the access groups \(groups): read each through the program \
                that stored it (kSecAttrAccessGroup); `keygate list` shows them
                """)
        }
        return found.first?.identity
    }
}
