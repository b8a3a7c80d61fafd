// `keygate init`: creates the keychain's master key, wraps it with the login
// password (checked through PAM) and a recovery key, and shows the recovery key once.

import Keygate

enum InitCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create your keychain and show its recovery key once.",
        discussion: "Asks for your login password through PAM (service 'keygate'), creates a random master key, wraps it with that password (Argon2id, cost calibrated on this machine) and with a recovery key, which is printed once. The first `keygate add` runs this step by itself.",
        options: GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let text = try context.operations(reason: "create your keychain").initialize()
        Console.err("Keychain created. Your recovery key is shown only this once; keep it somewhere safe.\nIt unlocks the keychain if your password is lost: keygate unlock --recovery\n")
        try text.write(toFileDescriptor: 1)
        Console.out("\n")
        return 0
    }
}
