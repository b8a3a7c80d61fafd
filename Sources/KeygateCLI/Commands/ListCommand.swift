// `keygate list`: the attributes of every matching item, as text or JSON, and for an
// item that can no longer be read, why. Never prints a secret and never prompts.

import Keygate

enum ListCommand: KeygateCommand {
    static let json = OptionSpec.flag("--json", help: "Print a JSON array.")
    static let allClasses = OptionSpec.flag("--all-classes", help: "List generic and internet passwords together.")

    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List items (attributes only, never secrets).",
        usage: "[-s SERVICE] [-a ACCOUNT] [--internet] [--json]",
        options: ItemOptions.matching + [
            json,
            allClasses,
        ] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        var query = try ItemOptions.query(args, configuration, context)
        if args.flag(Self.allClasses) || (args.value(ItemOptions.service) == nil && !args.flag(ItemOptions.internet)) {
            query.itemClass = nil
        }
        let items = try context.lookingOnly().operations().inventory.listing(matching: query)
        Console.out(args.flag(Self.json) ? ItemFormatter.json(items) : ItemFormatter.text(items))
        return 0
    }
}
