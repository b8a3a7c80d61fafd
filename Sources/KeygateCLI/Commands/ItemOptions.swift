// The item options shared by add, get, find, delete, list and exists, with the
// macOS `security` letters (-s -a -l -j -r -P -p -d -t), and their translation into
// an item identity, a query, or the attributes of a new item.

import Keygate

enum ItemOptions {
    static let service = OptionSpec.value("-s", "--service", valueName: "SERVICE", help: """
        The service (generic passwords) or server (internet passwords).
        """)
    static let account = OptionSpec.value("-a", "--account", valueName: "ACCOUNT", help: "The account name.")
    static let label = OptionSpec.value("-l", "--label", valueName: "LABEL", help: "A label shown in keyring browsers (default: service/account).")
    static let comment = OptionSpec.value("-j", "--comment", valueName: "COMMENT", help: "A comment stored with the item.")
    static let internet = OptionSpec.flag("--internet", help: "Work on internet passwords instead of generic ones.")
    static let proto = OptionSpec.value("-r", "--protocol", valueName: "PROTOCOL", help: """
        Internet passwords: protocol, a name (https, ssh) or Apple's four-letter code (htps).
        """)
    static let port = OptionSpec.value("-P", "--port", valueName: "PORT", help: "Internet passwords: port number.")
    static let path = OptionSpec.value("-p", "--path", valueName: "PATH", help: "Internet passwords: path.")
    static let domain = OptionSpec.value("-d", "--security-domain", valueName: "DOMAIN", help: "Internet passwords: security domain.")
    static let authType = OptionSpec.value("-t", "--auth-type", valueName: "TYPE", help: """
        Internet passwords: authentication type (default, http-basic, http-digest, form, ntlm …).
        """)

    static let matching: [OptionSpec] = [service, account, internet, proto, port, path, domain, authType]

    static func itemClass(_ args: ParsedArguments) -> ItemClass {
        args.flag(Self.internet) ? .internetPassword : .genericPassword
    }

    /// The exact identity named by -s/-a (and the internet fields). Both -s and -a are required.
    static func identity(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext) throws -> ItemIdentity {
        guard let service = args.value(Self.service) else {
            throw context.usageError("\(config.commandName) needs -s SERVICE", config)
        }
        guard let account = args.value(Self.account) else {
            throw context.usageError("\(config.commandName) needs -a ACCOUNT", config)
        }
        try checkName(service, "service"); try checkName(account, "account")
        switch itemClass(args) {
        case .genericPassword:
            try rejectInternetFields(args, config, context)
            return .generic(service: service, account: account)
        case .internetPassword:
            return .internet(server: service, account: account, protocol: try protocolValue(args),
                             port: try portValue(args) ?? 0, path: args.value(Self.path) ?? "",
                             securityDomain: args.value(Self.domain) ?? "",
                             authenticationType: try authTypeValue(args))
        }
    }

    /// A query from whichever of -s/-a/… are given.
    static func query(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext) throws -> ItemQuery {
        let cls = itemClass(args)
        if cls == .genericPassword { try rejectInternetFields(args, config, context) }
        var q = ItemQuery(itemClass: cls)
        if let s = args.value(Self.service) {
            try checkName(s, "service")
            if cls == .genericPassword { q.service = s } else { q.server = s }
        }
        if let a = args.value(Self.account) { try checkName(a, "account"); q.account = a }
        if cls == .internetPassword {
            q.protocol = try protocolValue(args)
            q.port = try portValue(args)
            q.path = args.value(Self.path)
            q.securityDomain = args.value(Self.domain)
            q.authenticationType = try authTypeValue(args)
        }
        return q
    }

    private static func rejectInternetFields(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext) throws {
        for option in [Self.proto, Self.port, Self.path, Self.domain, Self.authType] where args.value(option) != nil {
            throw context.usageError("\(option.key) applies to internet passwords: add --internet (or use the -internet-password verb)", config)
        }
    }

    private static func protocolValue(_ args: ParsedArguments) throws -> InternetProtocol? {
        guard let raw = args.value(Self.proto) else { return nil }
        guard let p = InternetProtocol(name: raw) else {
            throw KeychainError(.param, "unknown protocol '\(raw)': use a name such as https, ssh, ftp, or a four-letter code such as htps")
        }
        return p
    }

    private static func portValue(_ args: ParsedArguments) throws -> UInt16? {
        guard let raw = args.value(Self.port) else { return nil }
        guard let p = UInt16(raw) else {
            throw KeychainError(.param, "port '\(raw)' is not a number from 0 to 65535")
        }
        return p
    }

    private static func authTypeValue(_ args: ParsedArguments) throws -> AuthenticationType? {
        guard let raw = args.value(Self.authType) else { return nil }
        guard let t = AuthenticationType(name: raw) else {
            throw KeychainError(.param, "unknown authentication type '\(raw)': use default, http-basic, http-digest, form, ntlm, msn, dpa or rpa")
        }
        return t
    }

    /// Names are attributes in the Secret Service: printable, bounded, no NUL.
    static func checkName(_ value: String, _ what: String) throws {
        if value.utf8.count > 1024 {
            throw KeychainError(.param, "the \(what) is \(value.utf8.count) bytes long; the limit is 1024")
        }
        if value.utf8.contains(0) {
            throw KeychainError(.param, "the \(what) contains a NUL byte, which the Secret Service cannot store: remove it")
        }
    }
}
