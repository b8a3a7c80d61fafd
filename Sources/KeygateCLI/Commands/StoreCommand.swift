// `keygate store` (secret-tool store): stores the secret read from standard input (or
// typed twice at a prompt, AddCommand.readSecret) under the item named by secret-tool's
// attribute pairs (SecretToolAttributes), replacing an existing item's secret as
// secret-tool does. The secret is never taken from argv.

import Keygate

enum StoreCommand: KeygateCommand {
    static let label = OptionSpec.value("--label", valueName: "LABEL", help: "The label shown in keyring browsers (default: service/account).")

    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Store a secret from standard input under secret-tool's attributes (secret-tool store order).",
        discussion: """
            `keygate store --label=VPN service vpn account alice < secret`, as secret-tool. service (or server, for an internet \
            password) and account name the item; any other attribute (`keygate store --label=Foo myapp x`) is stored with it \
            and matched by search and lookup, and an item with no service is named by those attributes (service "myapp=x"). \
            An existing item's secret is replaced, as secret-tool does, and it keeps its \
            access; a new item gets the default accessibility and the policy's default-access, like `keygate add`.
            """,
        usage: "[--label LABEL] ATTRIBUTE VALUE [ATTRIBUTE VALUE]… < secret",
        options: [label,
                  SearchCommand.attr] + GlobalOptions.all,
        positionals: [SecretToolAttributes.pairs])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let attributes = try SecretToolAttributes(args, configuration, context)
        let identity = try attributes.identity(configuration, context)
        // With no account, the label is the service alone (not "myapp=x/").
        let label = args.value(Self.label) ?? attributes.values["label"] ?? (identity.account.isEmpty ? identity.service : nil)
        if let label { try ItemOptions.checkName(label, "label") }
        var item = ItemAttributes(identity: identity, label: label, comment: attributes.values["comment"],
                                  accessibility: .whenUnlocked, extras: attributes.extras)
        let operations = try context.operations(reason: "store \(identity.displayName)")
        let (access, source) = try AccessChoice.resolve(nil, identity: identity, replace: true, operations: operations)
        item.accessControl = access
        let secret = try AddCommand.readSecret(for: identity, context: context)
        let result = try operations.add(item, secret: secret, replace: true)
        Console.err(AccessChoice.statement(identity, source, result))
        return 0
    }
}
