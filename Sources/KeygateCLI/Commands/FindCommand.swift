// macOS's find-generic-password / find-internet-password: prints the item's
// attributes, or with -w only its secret.

import Keygate

enum FindCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "find-generic-password",
        abstract: "Show an item's attributes; with -w print only its secret (macOS spelling).",
        aliases: ["find-internet-password"],
        usage: "-s SERVICE [-a ACCOUNT] [-w]",
        options: ItemOptions.matching + [.flag("-w", help: "Print only the secret.")] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        if args.flag("-w") { return try GetCommand.run(args, context: context) }
        let operations = try context.operations()
        let identity = try ItemLookup.identity(args, configuration, context, operations)
        guard let attributes = try operations.attributes(matching: ItemQuery(exactly: identity)).first else {
            throw KeychainError(.itemNotFound, "no item for \(identity.displayName): list what exists with `keygate list`")
        }
        Console.out(ItemFormatter.text([attributes]))
        return 0
    }
}
