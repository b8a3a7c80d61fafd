// `keygate unlock`: authenticates through PAM (or takes the recovery key) and
// caches the master key in the kernel keyring for the policy's lock-after time.
// As root with --host-protector --user NAME: the boot step of a service account
// (HostProtectorAdmin), run from a unit's ExecStartPre=+. Alias unlock-keychain
// (macOS); its keychain argument is checked by KeychainArgument.

import Keygate

enum UnlockCommand: KeygateCommand {
    static let recovery = OptionSpec.flag("--recovery", help: "Unlock with the recovery key shown at init instead of the password.")

    static let configuration = CommandConfiguration(
        commandName: "unlock",
        abstract: "Unlock the keychain now (PAM password, or --recovery).",
        discussion: """
            The unlocked master key is cached in the kernel keyring, readable only by your processes, until the lock-after time \
            passes (default 15 minutes) or `keygate lock`. As root, `--host-protector --user NAME` opens NAME's keychain with \
            its host protector, with no prompt: after-first-unlock items stay readable by NAME until reboot (a service unit's \
            ExecStartPre=+ step). Alias unlock-keychain, as on macOS; its -p PASSWORD is not taken (a password never goes on \
            the command line), and a keychain argument may name only your one keychain (login.keychain).
            """,
        aliases: ["unlock-keychain"],
        options: [recovery] + HostProtectorOptions.all + GlobalOptions.all,
        positionals: [KeychainArgument.positional])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        try KeychainArgument.check(args, configuration, context)
        if let user = try HostProtectorOptions.userName(args, configuration, context: context) {
            if args.flag(Self.recovery) { throw context.usageError("""
                --recovery and --host-protector are two different ways to unlock: give one
                """, configuration) }
            let lockAfter = try HostProtectorAdmin.unlock(userName: user, environment: context.configuration)
            Console.err("""
                Unlocked the keychain of \(user) with its host protector: after-first-unlock items until reboot, the rest for \
                \(lockAfter) s.\n
                """)
            return 0
        }
        let operations = try context.operations(reason: "unlock the keychain")
        if args.flag(Self.recovery) {
            try operations.unlock(recoveryKey: try context.readRecoveryKey(ifCanceled: "the keychain stays locked"))
        } else {
            try operations.unlock()
        }
        return 0
    }
}
