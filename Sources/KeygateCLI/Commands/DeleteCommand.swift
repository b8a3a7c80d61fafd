// `keygate delete`: removes one item, or with --all every item that matches, after
// saying how many and asking (Confirmation; --yes for scripts). Never asks for a
// password. macOS's delete-*-password spellings are DeletePasswordCommand.

import Keygate

enum DeleteCommand: KeygateCommand {
    static let all = OptionSpec.flag("--all", help: "Delete every matching item.")

    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete an item, or with --all every matching item.",
        discussion: """
            Without -a, --all is required, so that a missing -a never deletes more than intended. `keygate delete --all` alone \
            deletes every Keygate item. With --all it says how many items would go and asks on the terminal; --yes answers for \
            scripts (with no terminal and no --yes it exits 36 and deletes nothing).
            """,
        usage: "-s SERVICE -a ACCOUNT | keygate delete [-s SERVICE] --all",
        options: ItemOptions.matching + [all, Confirmation.yes] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let all = args.flag(Self.all)
        if args.value(ItemOptions.account) == nil, !all {
            throw context.usageError("delete without -a ACCOUNT needs --all, to confirm that every matching item goes", configuration)
        }
        let query = all ? try ItemOptions.query(args, configuration, context)
                        : ItemQuery(exactly: try ItemOptions.identity(args, configuration, context))
        let operations = try context.operations()
        if all {
            let matching = try operations.attributes(matching: query).count
            if matching > 0 {
                try Confirmation.ask("This deletes \(matching) item\(matching == 1 ? "" : "s") for good (their secrets cannot be recovered)",
                                     assumeYes: args.flag(Confirmation.yes))
            }
        }
        let count = try operations.delete(matching: query)
        if count == 0 {
            throw KeychainError(.itemNotFound, "no item matches, so nothing was deleted: list what exists with `keygate list`")
        }
        if all { Console.err("deleted \(count) item\(count == 1 ? "" : "s")\n") }
        return 0
    }
}
