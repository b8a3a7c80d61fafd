// The optional KEYCHAIN argument of macOS's lock-keychain, unlock-keychain and
// dump-keychain. A Keygate user has one keychain, so the argument is accepted when it
// names it (login.keychain, login.keychain-db, or Keygate's data folder as the
// `keychain:` line prints it, MacOSItemFormatter) and ignored; any other is refused.

enum KeychainArgument {
    static let positional = PositionalSpec(
        name: "keychain",
        help: """
            macOS's keychain argument: login.keychain, login.keychain-db or Keygate's data folder (each user has one keychain); \
            any other is refused.
            """,
        optional: true)

    static func check(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext) throws {
        guard let given = args.positional(positional.name) else { return }
        try check(given, config, context)
    }

    /// Accepts `given` when it names the user's one keychain; a usage error otherwise.
    static func check(_ given: String, _ config: CommandConfiguration, _ context: CommandContext) throws {
        let ours = MacOSItemFormatter.keychainPath(context.environment)
        let accepted = ["login.keychain", "login.keychain-db", ours, ours + "/"]
        if accepted.contains(given) || given.hasSuffix("/login.keychain") || given.hasSuffix("/login.keychain-db") { return }
        throw context.usageError("Keygate has one keychain per user (\(ours)): '\(given)' is not it; leave the keychain argument out", config)
    }
}
