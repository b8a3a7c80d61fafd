// `keygate exists`: exit 0 when the item exists, 44 when it does not. Prints
// nothing and never prompts, for use in scripts.

import Keygate

enum ExistsCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "exists",
        abstract: "Exit 0 if the item exists, 44 if not (no output, no prompt).",
        usage: "-s SERVICE -a ACCOUNT",
        options: ItemOptions.matching + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let identity = try ItemOptions.identity(args, configuration, context)
        let found = try context.operations().attributes(matching: ItemQuery(exactly: identity))
        return found.isEmpty ? KeychainError(.itemNotFound, "").exitCode : 0
    }
}
