// `keygate clear` (secret-tool clear): deletes every item whose attributes match
// (SecretToolAttributes), through KeychainOperations.delete. Never prompts.

import Keygate

enum ClearCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Delete every item whose attributes match (secret-tool clear order).",
        discussion: """
            `keygate clear service vpn account alice`, as secret-tool: every matching item is deleted. At least one attribute \
            is required. Exit status 44 when nothing matched.
            """,
        usage: "ATTRIBUTE VALUE [ATTRIBUTE VALUE]…",
        options: [SearchCommand.attr] + GlobalOptions.all,
        positionals: [SecretToolAttributes.pairs])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let attributes = try SecretToolAttributes(args, configuration, context)
        try attributes.requireSome("clear", configuration, context)
        let operations = try context.operations()
        var count = 0
        for item in try attributes.items(in: operations) {
            count += try operations.delete(matching: ItemQuery(exactly: item.identity))
        }
        if count == 0 {
            throw KeychainError(.itemNotFound, "no item matches, so nothing was deleted: list what exists with `keygate search`")
        }
        return 0
    }
}
