// macOS's delete-generic-password / delete-internet-password: deletes one item and,
// as macOS does, prints what was deleted (the attribute block of MacOSItemFormatter)
// on stdout, then "password has been deleted." on stderr (keychain_find.c). The item is resolved as find does
// (ItemLookup); the deletion is KeychainOperations.delete. Never prompts.

import Keygate

enum DeletePasswordCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete-generic-password",
        abstract: "Delete one item and print what was deleted, as macOS does.",
        discussion: """
            Prints the item's attribute block on stdout (as find-generic-password does), then `password has been deleted.` on \
            stderr, as macOS does. With only -s, the one item of that service; if several match, give -a. To delete several \
            items, use `keygate delete --all`.
            """,
        aliases: ["delete-internet-password"],
        usage: "-s SERVICE [-a ACCOUNT]",
        options: ItemOptions.matching + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operations = try context.operations()
        let identity = try ItemLookup.identity(args, configuration, context, operations)
        let query = ItemQuery(exactly: identity)
        guard let attributes = try operations.attributes(matching: query).first,
              try operations.delete(matching: query) > 0 else {
            throw KeychainError(.itemNotFound, "no item for \(identity.displayName), so nothing was deleted: list what exists with `keygate list`")
        }
        Console.out(MacOSItemFormatter.block(attributes, keychain: MacOSItemFormatter.keychainPath(context.environment)))
        Console.err("password has been deleted.\n")
        return 0
    }
}
