// `keygate exists`: exit 0 when the item exists, 44 when it does not. Prints
// nothing and never prompts, for use in scripts.

import Keygate

enum ExistsCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "exists",
        abstract: "Exit 0 if the item exists, 44 if not (no output, no prompt).",
        discussion: """
            An invalidated item (its password or recovery reset made it unreadable) still exists: `exists` exits 0, `list` \
            shows it as invalidated with the reason, and `get` exits 44 saying why. Delete it, or add it again with -U.
            """,
        usage: "-s SERVICE -a ACCOUNT",
        options: ItemOptions.matching + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let identity = try ItemOptions.identity(args, configuration, context)
        switch try context.lookingOnly().operations().inventory.existence(of: identity) {
        case .absent: return KeychainError(.itemNotFound, "").exitCode
        case .present: return 0
        // A damaged item (its secret came back empty) is what `get` and `list` say it is.
        case .damaged(let why): throw KeychainError(.itemNotFound, why)
        }
    }
}
