// `keygate ssh-askpass PROMPT`: an SSH_ASKPASS program (installed as
// keygate-ssh-askpass) that answers ssh-add's "Enter passphrase for KEYFILE: " with
// the passphrase `keygate ssh-add` stored under the key's fingerprint, after the
// item's presence check. Any other prompt (a host key question, a confirmation) and
// a "Bad passphrase" retry get no answer: exit 1, so ssh-add stops instead of looping
// on a stored passphrase that no longer works.
import Keygate

enum SSHAskpassCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "ssh-askpass",
        abstract: "SSH_ASKPASS for ssh-add (keygate-ssh-askpass): answer with a stored key passphrase.",
        discussion: """
            ssh-add runs it with its prompt as the only argument. For \"Enter passphrase for KEYFILE: \" it prints the \
            passphrase stored by `keygate ssh-add KEYFILE`, after a user-presence check; for any other prompt it prints nothing \
            and exits 1.
            """,
        usage: "PROMPT",
        options: GlobalOptions.all,
        positionals: [PositionalSpec(name: "prompt", help: "The prompt ssh-add shows.")])

    static let prefix = "Enter passphrase for "
    static let suffixes = [" (will confirm each use): ", ": "]

    /// The key file named in ssh-add's prompt, or nil for any other prompt.
    static func keyfile(inPrompt prompt: String) -> String? {
        guard prompt.hasPrefix(prefix) else { return nil }
        let rest = prompt.dropFirst(prefix.count)
        for suffix in suffixes where rest.hasSuffix(suffix) {
            let path = String(rest.dropLast(suffix.count))
            return path.isEmpty ? nil : path
        }
        return nil
    }

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let prompt = args.positional("prompt") ?? ""
        guard let keyfile = keyfile(inPrompt: prompt) else {
            Console.err("keygate-ssh-askpass: not a passphrase prompt from ssh-add, so no answer: \(prompt)\n")
            return 1
        }
        let fingerprint = try SSHKeygen.fingerprint(of: keyfile, environment: context.environment)
        let operations = try context.operations(reason: "load the SSH key \(keyfile)")
        guard let passphrase = try operations.secret(for: .generic(service: SSHAddCommand.service, account: fingerprint)) else {
            throw KeychainError(.itemNotFound, """
                no stored passphrase for \(keyfile) (\(fingerprint)): store it once with `keygate ssh-add \(keyfile)`
                """)
        }
        try passphrase.write(toFileDescriptor: 1)
        return 0
    }
}
