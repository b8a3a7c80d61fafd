// `keygate lock`: drops the cached master key (like `sudo -k`); with --all, every
// cached Keygate key including after-first-unlock (like `sudo -K`).

import Keygate

enum LockCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "lock",
        abstract: "Lock: drop the master key and this scope's authentications (like sudo -k; --all like sudo -K).",
        options: [.flag("--all", help: "Also drop the after-first-unlock key, like sudo -K.")] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        try context.operations().lock(all: args.flag("--all"))
        return 0
    }
}
