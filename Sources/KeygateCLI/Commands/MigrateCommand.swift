// `keygate migrate --to secret-service|embedded [--delete-source]`: moves the keychain's
// items between the Secret Service and the embedded store without unsealing them (so it
// never prompts). The work is KeychainOperations.migrate; this verb parses and reports.

import Keygate

enum MigrateCommand: KeygateCommand {
    static let to = OptionSpec.value("--to", valueName: "STORE", help: "The destination: secret-service or embedded.")
    static let deleteSource = OptionSpec.flag("--delete-source", help: """
        Delete each item from the source store once its copy is verified (asks first; --yes for scripts).
        """)

    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move items between the Secret Service and the embedded store, still sealed.",
        discussion: """
            Copies every Keygate item of the other store into STORE as its sealed blob, without unsealing it (no password is \
            asked), and reads each copy back to check it is byte-identical. With --delete-source, each source item is deleted \
            only after its copy checked out. An item already in STORE with the same blob counts as done, so an interrupted \
            migration can be run again; an item whose identity is in STORE with another secret is reported and left in both \
            stores. Afterwards STORE is recorded as the keychain's store for `auto`.\n\nExit status: 0 when every item is in \
            STORE, 45 (errSecDuplicateItem) when some conflicted.
            """,
        usage: "--to secret-service|embedded [--delete-source]",
        options: [to,
                  deleteSource,
                  Confirmation.yes]
            + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let text = args.value(Self.to) else {
            throw context.usageError("migrate needs --to secret-service or --to embedded", configuration)
        }
        guard let destination = StoreKind(rawValue: text) else {
            throw context.usageError("--to \(text): the store is secret-service or embedded", configuration)
        }
        let operations = try context.operations()
        if args.flag(Self.deleteSource) {
            try Confirmation.ask("This moves every Keygate item into the \(destination.rawValue) store and deletes each from the other "
                                 + "store once its copy reads back the same", assumeYes: args.flag(Confirmation.yes))
        }
        let report = try operations.storeMigration.run(to: destination, deleteSource: args.flag(Self.deleteSource))
        var out = "migrate \(report.source) -> \(report.destination): \(report.copied.count) copied, "
            + "\(report.alreadyThere.count) already there, \(report.conflicts.count) conflicting, \(report.deleted) deleted from \(report.source)\n"
        for name in report.conflicts {
            out += "conflict: \(name) is in both stores with different secrets; left in both (delete one copy, then run migrate again)\n"
        }
        Console.err(out)
        if case .value(.fixed(let kind)?) = context.configuration.store, case let chosen = kind.rawValue, chosen != report.destination {
            Console.err("note: KEYGATE_STORE=\(chosen) still chooses the \(chosen) store; unset it to use \(report.destination)\n")
        }
        return report.conflicts.isEmpty ? 0 : KeychainError(.duplicateItem, "").exitCode
    }
}
