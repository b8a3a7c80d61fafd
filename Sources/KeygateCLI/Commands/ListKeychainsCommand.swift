// macOS's list-keychains and default-keychain: a Keygate user has one keychain, so
// both print it as macOS prints a search list (four spaces, the path in quotes), the
// path being the one the `keychain:` line of find-*-password names
// (MacOSItemFormatter). `-d user` (the default) lists it; Keygate has no system,
// common or dynamic keychain, so those domains list nothing. `-s` may name only the
// user's own keychain (KeychainArgument), which changes nothing.

import Keygate

enum ListKeychainsCommand: KeygateCommand {
    static let domain = OptionSpec.value("-d", "--domain", valueName: "DOMAIN", help: """
        user (the default), system, common or dynamic; only the user domain has a keychain in Keygate.
        """)
    static let set = OptionSpec.flag("-s", "--set", help: """
        Set the search list (or the default) to the keychains given: only your one keychain is accepted, and nothing changes.
        """)

    static let configuration = CommandConfiguration(
        commandName: "list-keychains",
        abstract: "Print your keychain as macOS prints the keychain search list (alias default-keychain).",
        discussion: """
            Each user has one keychain, Keygate's data folder: both verbs print it, indented by four spaces and quoted, as \
            macOS does. The system, common and dynamic domains have none.
            """,
        aliases: ["default-keychain"],
        usage: "[-d user|system|common|dynamic] [-s [KEYCHAIN…]]",
        options: [domain, set],
        positionals: [PositionalSpec(name: "keychain", help: "With -s: your keychain (login.keychain).", optional: true, variadic: true)])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let chosen = args.value(Self.domain) ?? "user"
        guard ["user", "system", "common", "dynamic"].contains(chosen) else {
            throw context.usageError("unknown domain '\(chosen)': use user, system, common or dynamic", configuration)
        }
        let keychains = args.positionalValues("keychain")
        if !keychains.isEmpty, !args.flag(Self.set) {
            throw context.usageError("keychains are given only with -s", configuration)
        }
        if args.flag(Self.set) {
            for keychain in keychains { try KeychainArgument.check(keychain, configuration, context) }
            return 0
        }
        if chosen == "user" {
            Console.out("    \"\(MacOSItemFormatter.keychainPath(context.environment))\"\n")
        }
        return 0
    }
}
