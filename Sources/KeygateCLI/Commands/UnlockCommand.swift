// `keygate unlock`: authenticates through PAM (or takes the recovery key) and
// caches the master key in the kernel keyring for the policy's lock-after time.

import Keygate

enum UnlockCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the keychain now (PAM password, or --recovery).",
        discussion: "The unlocked master key is cached in the kernel keyring, readable only by your processes, until the lock-after time passes (default 15 minutes) or `keygate lock`.",
        options: [.flag("--recovery", help: "Unlock with the recovery key shown at init instead of the password.")] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operations = try context.operations(reason: "unlock the keychain")
        if args.flag("--recovery") {
            try operations.unlock(recoveryKey: try context.readRecoveryKey(ifCanceled: "the keychain stays locked"))
        } else {
            try operations.unlock()
        }
        return 0
    }
}
