// macOS's find-generic-password / find-internet-password: prints the item's
// attribute block as macOS does (MacOSItemFormatter); with -g also the password on
// stderr as `password: "…"`; with -w only its secret and a newline, as macOS does.
// Besides -s and -a, macOS's -l (label), -D (kind), -G (generic attribute) and -c
// (creator) narrow the search.

import Keygate

enum FindCommand: KeygateCommand {
    static let passwordOnStderr = OptionSpec.flag("-g", help: "Also print the password on stderr, as macOS does (password: \"…\").")
    static let passwordOnly = OptionSpec.flag("-w", help: "Print only the secret, then a newline, as macOS does.")
    static let label = OptionSpec.value("-l", "--label", valueName: "LABEL", help: "Match the label.")
    static let kind = OptionSpec.value("-D", "--kind", valueName: "KIND", help: "Match the kind (macOS's \"desc\" attribute).")
    static let generic = OptionSpec.value("-G", "--generic", valueName: "VALUE", help: "Match the generic attribute (\"gena\").")
    static let creator = OptionSpec.value("-c", "--creator", valueName: "CREATOR", help: """
        Match the creator code ("crtr"). Keygate's items have none, so nothing matches.
        """)
    /// The filters macOS's find takes besides -s and -a.
    static let filters = [label, kind, generic, creator]

    static let configuration = CommandConfiguration(
        commandName: "find-generic-password",
        abstract: "Show an item's attributes as macOS does; -g adds the password on stderr, -w prints only the secret.",
        discussion: """
            The attribute block is macOS's (keychain:, version:, class:, attributes:); its keychain line names Keygate's data \
            folder ($XDG_DATA_HOME/keygate). -g prints `password: \"…\"` on stderr, or `password: 0x…` in hex when the secret \
            is not printable text, as macOS does.
            """,
        aliases: ["find-internet-password"],
        usage: "[-s SERVICE] [-a ACCOUNT] [-l LABEL] [-D KIND] [-G VALUE] [-c CREATOR] [-g | -w]",
        options: ItemOptions.matching + filters + [
            passwordOnStderr,
            passwordOnly,
        ] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        if args.flag(Self.passwordOnly), args.flag(Self.passwordOnStderr) {
            throw context.usageError("-g and -w both print the password: give one", configuration)
        }
        let operations = try context.operations()
        do {
            return try find(args, context, operations)
        } catch let error as KeychainError where error.code == .itemNotFound {
            // No Keygate item: one secret-tool (or another libsecret program) stored, as secret-tool reads it.
            guard let found = try foreign(args, operations) else { throw error }
            return try show(found, args, context)
        }
    }

    /// The Keygate item's attributes, secret or both, as macOS prints them.
    private static func find(_ args: ParsedArguments, _ context: CommandContext, _ operations: KeychainOperations) throws -> Int32 {
        let identity = try Self.identity(args, context, operations)
        if args.flag(Self.passwordOnly) {
            guard let secret = try operations.secret(for: identity) else {
                throw KeychainError(.itemNotFound, "no item for \(identity.displayName): list what exists with `keygate list`")
            }
            try secret.write(toFileDescriptor: 1)
            Console.out("\n")
            return 0
        }
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

    /// The one item -s/-a and macOS's filters name (ItemLookup without filters).
    /// An item secret-tool (or another libsecret program) stored with these service and account
    /// attributes, when no Keygate item has them: nil when there is none, or for internet passwords.
    private static func foreign(_ args: ParsedArguments, _ operations: KeychainOperations) throws -> KeychainOperations.ForeignItem? {
        guard !args.flag(ItemOptions.internet), filters.allSatisfy({ args.value($0) == nil }) else { return nil }
        var wanted: [String: String] = [:]
        if let service = args.value(ItemOptions.service) { wanted["service"] = service }
        if let account = args.value(ItemOptions.account) { wanted["account"] = account }
        let found = try operations.foreignItems(matching: wanted)
        guard found.count <= 1 else {
            throw KeychainError(.param, "\(found.count) items match: name one with -s SERVICE and -a ACCOUNT (see `secret-tool search`)")
        }
        return found.first
    }

    /// find-generic-password of another program's item: its secret with -w, else macOS's block.
    private static func show(_ item: KeychainOperations.ForeignItem, _ args: ParsedArguments, _ context: CommandContext) throws -> Int32 {
        if args.flag(Self.passwordOnly) {
            try item.secret.write(toFileDescriptor: 1)
            Console.out("\n")
            return 0
        }
        Console.out(MacOSItemFormatter.block(item.itemAttributes, keychain: MacOSItemFormatter.keychainPath(context.environment)))
        if args.flag(Self.passwordOnStderr) {
            try MacOSItemFormatter.writeSecret(item.secret, prefix: "password: ", toFileDescriptor: 2)
        }
        return 0
    }

    private static func identity(_ args: ParsedArguments, _ context: CommandContext, _ operations: KeychainOperations) throws -> ItemIdentity {
        guard filters.contains(where: { args.value($0) != nil }) else {
            return try ItemLookup.identity(args, configuration, context, operations)
        }
        var query = try ItemOptions.query(args, configuration, context)
        query.label = args.value(Self.label)
        query.description = args.value(Self.kind)
        var matches = try operations.attributes(matching: query)
        if let generic = args.value(Self.generic) { matches = matches.filter { $0.generic == Array(generic.utf8) } }
        if let creator = args.value(Self.creator) {
            throw KeychainError(.itemNotFound, "no item has the creator code '\(creator)': Keygate's items have none; leave out -c")
        }
        guard let first = matches.first else {
            throw KeychainError(.itemNotFound, "no item matches: list what exists with `keygate list`")
        }
        guard matches.count == 1 else {
            throw KeychainError(.param, "\(matches.count) items match: name one with -s SERVICE and -a ACCOUNT (see `keygate list`)")
        }
        return first.identity
    }
}
