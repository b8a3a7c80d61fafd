// `keygate init`: creates the keychain's master key, wraps it with the login
// password (checked through PAM) and a recovery key, and shows the recovery key once.
// As root with --host-protector --user NAME: a service account's keychain, wrapped by
// the host protector instead of a password (HostProtectorAdmin).

import Keygate

enum InitCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create your keychain and show its recovery key once.",
        discussion: """
            Asks for your login password through PAM (service 'keygate'), creates a random master key, wraps it with that \
            password (Argon2id, cost calibrated on this machine) and with a recovery key, which is printed once. The first \
            `keygate add` runs this step by itself. As root, `--host-protector --user NAME` makes NAME's keychain with no \
            password: wrapped by the host protector (derived from the host key) and a recovery key, or adds a host protector to \
            NAME's unlocked keychain; the policy's host-protector setting must name NAME.
            """,
        options: HostProtectorOptions.all + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        if let user = try HostProtectorOptions.userName(args, configuration, context: context) {
            switch try HostProtectorAdmin.enable(userName: user, environment: context.configuration) {
            case .created(let text):
                Console.err("""
                    Keychain of \(user) created with a host protector (no password). Its recovery key is shown only this once; keep it \
                    somewhere safe.\nIt unlocks the keychain if the host key is lost (a restored disk, another host): keygate unlock \
                    --recovery, as \(user)\n
                    """)
                try text.write(toFileDescriptor: 1)
                Console.out("\n")
            case .added:
                Console.err("Host protector added to the keychain of \(user).\n")
            }
            return 0
        }
        let operations = try context.operations(reason: "create your keychain")
        let text = try operations.initialize()
        Console.err("""
            Keychain created. Your recovery key is shown only this once; keep it somewhere safe.\nIt unlocks the keychain if \
            your password is lost: keygate unlock --recovery\n
            """)
        try text.write(toFileDescriptor: 1)
        Console.out("\n")
        // Which store, and why: never a silent choice (a provider that runs is kept to).
        if let choice = operations.storeChoice { Console.err("Items are kept in \(choice).\n") }
        // Which Secret Service libsecret programs reach, and whether it is Keygate's own.
        if let provider = Doctor.secretServiceProvider(environment: context.configuration) {
            Console.err("Secret Service: \(provider.text).\n")
        }
        return 0
    }
}
