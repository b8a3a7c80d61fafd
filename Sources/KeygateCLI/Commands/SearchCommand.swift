// `keygate search`: the items whose attributes match, named as secret-tool users name
// them (`--attr service=vpn`, repeatable, or secret-tool's `service vpn` pairs), shown
// as `list` shows them (ItemFormatter). Never prints a secret and never prompts.

import Keygate

enum SearchCommand: KeygateCommand {
    static let attr = OptionSpec.repeated("--attr", valueName: "NAME=VALUE",
        help: "Match an attribute (repeatable): \(SecretToolAttributes.names.joined(separator: ", ")), or any other name.")

    static let json = OptionSpec.flag("--json", help: "Print a JSON array.")
    /// secret-tool's spellings: search shows every match, and attributes need no unlock.
    static let all = OptionSpec.flag("--all", help: "secret-tool's: show every match (search always does).")
    static let unlock = OptionSpec.flag("--unlock", help: "secret-tool's: accepted; attributes are listed without an unlock.")

    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "List the items whose attributes match (secret-tool search; attributes only, never secrets).",
        discussion: """
            Attributes are given as --attr NAME=VALUE, or as secret-tool's pairs (`keygate search service vpn`); every one must \
            match. A server, protocol, port, path, security-domain or authentication-type attribute searches internet \
            passwords; otherwise both classes are searched. Any other name (myapp) matches the attributes items were stored \
            with (secret-tool's, `keygate add --attr`), shown as `attr: NAME=VALUE`. Unlike secret-tool, search never prints a secret: use lookup or get.
            """,
        usage: "[--all] [--unlock] [--attr NAME=VALUE]… [ATTRIBUTE VALUE]… [--json]",
        options: [attr, json, all, unlock] + GlobalOptions.all,
        positionals: [SecretToolAttributes.pairs])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let attributes = try SecretToolAttributes(args, configuration, context)
        let items = try context.operations().inventory.listing(matching: try attributes.query())
            .filter { attributes.matches($0.attributes) }
        Console.out(args.flag(Self.json) ? ItemFormatter.json(items) : ItemFormatter.text(items))
        return 0
    }
}
