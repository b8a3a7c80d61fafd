// secret-tool's attribute/value pairs (`service vpn account alice`, or `--attr
// service=vpn`) for search, lookup, store and clear: the names secret-tool users
// know, translated into an ItemQuery (values checked as ItemOptions checks them), or
// into the exact identity of an item to store. `server` (or any internet field)
// means an internet password; otherwise a generic one.

import Keygate

struct SecretToolAttributes {
    /// The names accepted, in the order help lists them.
    static let names = ["service", "account", "server", "protocol", "port", "path", "security-domain",
                        "authentication-type", "label", "comment"]
    static let internetNames: Set<String> = ["server", "protocol", "port", "path", "security-domain", "authentication-type"]
    /// Other spellings: secret-tool's `user` and `domain`, Keygate's option names.
    static let synonyms = ["user": "account", "username": "account", "host": "server", "domain": "security-domain",
                           "auth-type": "authentication-type", "description": "comment"]

    static let pairs = PositionalSpec(
        name: "attribute-value",
        help: "secret-tool's attribute/value pairs: \(names.joined(separator: ", ")).",
        optional: true, variadic: true)

    private(set) var values: [String: String] = [:]

    /// From positional pairs (secret-tool's order) and `--attr NAME=VALUE` options.
    init(_ args: ParsedArguments, _ config: CommandConfiguration, _ context: CommandContext) throws {
        var entries: [(String, String)] = []
        let positional = args.positionalValues(Self.pairs.name)
        guard positional.count % 2 == 0 else {
            // The odd word is not repeated: it may be a secret typed where none belongs.
            throw context.usageError("""
                attributes come in pairs (attribute value): the last one has no value; a secret is never an argument, it comes on \
                standard input
                """, config)
        }
        for i in stride(from: 0, to: positional.count, by: 2) { entries.append((positional[i], positional[i + 1])) }
        for attr in args.values(SearchCommand.attr) {
            guard let eq = attr.firstIndex(of: "=") else {
                throw context.usageError("--attr takes NAME=VALUE, with an '='", config)
            }
            entries.append((String(attr[..<eq]), String(attr[attr.index(after: eq)...])))
        }
        for (rawName, value) in entries {
            let name = Self.synonyms[rawName.lowercased()] ?? rawName.lowercased()
            guard Self.names.contains(name) else {
                let hint = NameSuggestion.closest(to: rawName, among: Self.names).map { ": did you mean '\($0)'?" } ?? ""
                throw context.usageError("unknown attribute '\(rawName)'\(hint) (known: \(Self.names.joined(separator: ", ")))", config)
            }
            if let earlier = values[name], earlier != value {
                throw context.usageError("attribute \(name) is given twice with different values", config)
            }
            try ItemOptions.checkName(value, name)
            values[name] = value
        }
    }

    var isEmpty: Bool { values.isEmpty }
    var isInternet: Bool { values.keys.contains { Self.internetNames.contains($0) } }

    /// The query these attributes describe; label and comment are matched by `matches`.
    func query() throws -> ItemQuery {
        var q = ItemQuery(itemClass: isInternet ? .internetPassword : nil)
        if isInternet {
            q.server = values["server"] ?? values["service"]
        } else {
            q.service = values["service"]
        }
        q.account = values["account"]
        q.label = values["label"]
        if isInternet {
            q.protocol = try protocolValue()
            q.port = try portValue()
            q.path = values["path"]
            q.securityDomain = values["security-domain"]
            q.authenticationType = try authTypeValue()
        }
        return q
    }

    /// Whether an item's comment is the one asked for (ItemQuery has no comment field).
    func matches(_ attributes: ItemAttributes) -> Bool {
        values["comment"].map { attributes.comment == $0 } ?? true
    }

    /// The attributes of every item that matches: the store's query, then the comment.
    func items(in operations: KeychainOperations) throws -> [ItemAttributes] {
        try operations.attributes(matching: try query()).filter(matches)
    }

    /// A usage error unless at least one attribute was given: `verb` must never act on every item.
    func requireSome(_ verb: String, _ config: CommandConfiguration, _ context: CommandContext) throws {
        if isEmpty { throw context.usageError("\(verb) needs at least one attribute (service NAME …), so that it never acts on every item", config) }
    }

    /// The exact item `store` writes: service and account, or server and account.
    func identity(_ config: CommandConfiguration, _ context: CommandContext) throws -> ItemIdentity {
        guard let account = values["account"] else {
            throw context.usageError("\(config.commandName) needs the account attribute (account NAME)", config)
        }
        if isInternet {
            guard let server = values["server"] ?? values["service"] else {
                throw context.usageError("\(config.commandName) of an internet password needs the server attribute", config)
            }
            return .internet(server: server, account: account, protocol: try protocolValue(), port: try portValue() ?? 0,
                             path: values["path"] ?? "", securityDomain: values["security-domain"] ?? "",
                             authenticationType: try authTypeValue())
        }
        guard let service = values["service"] else {
            throw context.usageError("\(config.commandName) needs the service attribute (service NAME)", config)
        }
        return .generic(service: service, account: account)
    }

    private func protocolValue() throws -> InternetProtocol? {
        guard let raw = values["protocol"] else { return nil }
        guard let p = InternetProtocol(name: raw) else {
            throw KeychainError(.param, "unknown protocol '\(raw)': use a name such as https, ssh, ftp, or a four-letter code such as htps")
        }
        return p
    }

    private func portValue() throws -> UInt16? {
        guard let raw = values["port"] else { return nil }
        guard let p = UInt16(raw) else { throw KeychainError(.param, "port '\(raw)' is not a number from 0 to 65535") }
        return p
    }

    private func authTypeValue() throws -> AuthenticationType? {
        guard let raw = values["authentication-type"] else { return nil }
        guard let t = AuthenticationType(name: raw) else {
            throw KeychainError(.param, "unknown authentication type '\(raw)': use default, http-basic, http-digest, form, ntlm, msn, dpa or rpa")
        }
        return t
    }
}
