// `keygate forget-user UID` (root): after `userdel`, removes the gatekeeper's state for
// that uid, so that a new account given the same uid inherits nothing,
// and names the processes that still hold the uid's kernel keyring. Delegates to the installed
// gatekeeper (`keygate-gatekeeper --forget-user`, KeygateGatekeeper's ForgetUser): root's code
// lives in root's program, not in the library apps link.

import Keygate

enum ForgetUserCommand: KeygateCommand {
    static let removing = OptionSpec.flag("--removing", help: """
        The account still exists because it is being removed (userdel's USERDEL_CMD runs before the removal): forget it anyway.
        """)

    static let configuration = CommandConfiguration(
        commandName: "forget-user",
        abstract: "(root) After userdel, remove the gatekeeper's state of a uid, so that a new user with that uid inherits nothing.",
        discussion: """
            Removes everything root keeps for the uid: /var/lib/keygate/gate/UID (its gate secret: its gated items are then \
            lost for good), /run/keygate/ts/UID and its .lock (authentication records, failure counters, lockouts, handles), \
            /run/keygate/finger/UID (the finger-unlock seed) and /run/keygate/UID.sessions (pam_keygate's session count); moves \
            its audit record /var/log/keygate/users/UID.log (and .1) to /var/log/keygate/forgotten/. A uid that still has an account is \
            refused unless --removing is given. Processes still running as the uid keep its kernel keyring, and any key cached \
            in it, until they end: they are listed; end them (pkill -KILL -u UID) before a new account gets the uid. Run it \
            after userdel or deluser, or from deluser's /usr/local/sbin/deluser.local hook.
            """,
        usage: "[--removing] UID",
        options: [removing],
        positionals: [PositionalSpec(name: "uid", help: "The removed account's uid (a number).")])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        guard let text = args.positional("uid"), UInt32(text) != nil else {
            throw context.usageError("forget-user needs the removed account's uid, a number", configuration)
        }
        guard ProcessIdentity.euid == 0 else {
            throw KeychainError.param("keygate forget-user runs as root only (it removes root's state): run it with sudo")
        }
        // Root's code does it, in root's program: the installed gatekeeper prints what it removed.
        return try RootGatekeeper.run(["--forget-user"] + (args.flag(Self.removing) ? ["--removing"] : []) + [text],
                                      environment: context.configuration)
    }
}
