// `keygate search`: the items whose attributes match, named as secret-tool users name
// them (`--attr service=vpn`, repeatable, or secret-tool's `service vpn` pairs), shown
// as `list` shows them (ItemFormatter). Never prints a secret and never prompts.

import Keygate

enum SearchCommand: KeygateCommand {
    static let attr = OptionSpec.repeated("--attr", valueName: "NAME=VALUE",
        help: "Match an attribute (repeatable): \(SecretToolAttributes.names.joined(separator: ", ")).")

    static let json = OptionSpec.flag("--json", help: "Print a JSON array.")

    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "List the items whose attributes match (secret-tool search; attributes only, never secrets).",
        discussion: """
            Attributes are given as --attr NAME=VALUE, or as secret-tool's pairs (`keygate search service vpn`); every one must \
            match. A server, protocol, port, path, security-domain or authentication-type attribute searches internet \
            passwords; otherwise both classes are searched. Unlike secret-tool, search never prints a secret: use lookup or get.
            """,
        usage: "[--attr NAME=VALUE]… [ATTRIBUTE VALUE]… [--json]",
        options: [attr, json] + GlobalOptions.all,
        positionals: [SecretToolAttributes.pairs])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let attributes = try SecretToolAttributes(args, configuration, context)
        let items = try context.operations().listing(matching: try attributes.query())
            .filter { attributes.matches($0.attributes) }
        Console.out(args.flag(Self.json) ? ItemFormatter.json(items) : ItemFormatter.text(items))
        return 0
    }
}
