// The options `keygate init` and `keygate unlock` share for a service account's host
// protector (root only): `--host-protector --user NAME`. The work is the library's
// HostProtectorAdmin; this file only reads the options and says what was done.

import Keygate

enum HostProtectorOptions {
    static let hostProtector = OptionSpec.flag("--host-protector", help: """
        Root only: use the host protector of --user's keychain (a service account with no password; the policy's \
        host-protector setting must name it). See docs/SERVICES.md.
        """)
    static let user = OptionSpec.value("--user", valueName: "NAME", help: "With --host-protector: the account whose keychain to act on.")
    static let all: [OptionSpec] = [hostProtector, user]

    /// The --user name when --host-protector is given; nil without --host-protector.
    /// A usage error for --user alone or --host-protector without --user.
    static func userName(_ args: ParsedArguments, _ configuration: CommandConfiguration, context: CommandContext) throws -> String? {
        let name = args.value(Self.user)
        guard args.flag(Self.hostProtector) else {
            if name != nil { throw context.usageError("--user goes with --host-protector", configuration) }
            return nil
        }
        guard let name, !name.isEmpty else {
            throw context.usageError("--host-protector needs --user NAME (the service account)", configuration)
        }
        return name
    }
}
