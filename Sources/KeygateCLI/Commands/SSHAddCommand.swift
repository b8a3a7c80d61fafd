// `keygate ssh-add KEYFILE`: stores an SSH key's passphrase once, so that
// keygate-ssh-askpass can answer ssh-add later. The passphrase is asked for (at the
// terminal, askpass or pinentry, as every keygate prompt), checked against the key
// with ssh-keygen (SSHKeygen: never in argv or the environment), and stored as the
// generic password service "ssh", account = the key's SHA256 fingerprint, gated by
// user presence unless --no-presence is given. Then ssh-add itself can be run with
// SSH_ASKPASS=keygate-ssh-askpass SSH_ASKPASS_REQUIRE=force.
import Keygate

enum SSHAddCommand: KeygateCommand {
    static let noPresence = OptionSpec.flag("--no-presence", help: """
        Do not require user presence to read the passphrase back (the keychain's lock still applies).
        """)
    static let update = OptionSpec.flag("-U", "--update", help: "Replace a passphrase already stored for this key.")

    static let configuration = CommandConfiguration(
        commandName: "ssh-add",
        abstract: "Store an SSH key's passphrase (checked with ssh-keygen) for keygate-ssh-askpass.",
        discussion: """
            The passphrase is asked for, checked with `ssh-keygen -y`, and stored under the key's SHA256 fingerprint (service \
            ssh), readable only after a user-presence check. Then `SSH_ASKPASS=keygate-ssh-askpass SSH_ASKPASS_REQUIRE=force \
            ssh-add KEYFILE` loads the key without typing the passphrase.
            """,
        usage: "KEYFILE [--no-presence] [-U]",
        options: [
            noPresence,
            update,
        ] + GlobalOptions.all,
        positionals: [PositionalSpec(name: "keyfile", help: "The private key file, as you will give it to ssh-add.")])

    static let service = "ssh"

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let keyfile = args.positional("keyfile") else { throw context.usageError("ssh-add needs KEYFILE", configuration) }
        let fingerprint = try SSHKeygen.fingerprint(of: keyfile, environment: context.environment)
        let empty = try SecureBytes(count: 0)
        if try SSHKeygen.opens(keyfile, with: empty, environment: context.environment) {
            throw KeychainError(.param, "the key \(keyfile) has no passphrase: there is nothing to store (ssh-add loads it as it is)")
        }
        let identity = ItemIdentity.generic(service: service, account: fingerprint)
        let operations = try context.operations(reason: "store the passphrase of \(keyfile)")
        if !args.flag(Self.update), try !operations.attributes(matching: ItemQuery(exactly: identity)).isEmpty {
            throw KeychainError(.duplicateItem, "a passphrase for \(keyfile) (\(fingerprint)) is already stored: add -U to replace it")
        }
        let prompter = context.prompter
        try prompter.ensureAvailable()
        var passphrase: SecureBytes?
        for _ in 0..<3 {
            guard let typed = try prompter.readSecret(prompt: "Passphrase for \(keyfile): ") else {
                throw KeychainError(.userCanceled, "canceled: nothing was stored")
            }
            if typed.count > 0, try SSHKeygen.opens(keyfile, with: typed, environment: context.environment) {
                passphrase = typed
                break
            }
            prompter.notify("That passphrase does not open \(keyfile); try again.")
        }
        guard let passphrase else {
            throw KeychainError(.authFailed, "the passphrase did not open \(keyfile) in three tries: nothing was stored")
        }
        let attributes = ItemAttributes(identity: identity, label: "SSH key passphrase: \(keyfile)", comment: keyfile,
                                        accessControl: args.flag(Self.noPresence) ? nil : .userPresence)
        try operations.add(attributes, secret: passphrase, replace: true)
        Console.err("""
            stored the passphrase of \(keyfile) (\(fingerprint)); load it with: SSH_ASKPASS=keygate-ssh-askpass \
            SSH_ASKPASS_REQUIRE=force ssh-add \(keyfile)\n
            """)
        return 0
    }
}
