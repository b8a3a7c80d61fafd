// secret-tool's attribute/value pairs (`service vpn account alice`, or `--attr
// service=vpn`) for search, lookup, store and clear: the names secret-tool users
// know, translated into an ItemQuery (values checked as ItemOptions checks them), or
// into the exact identity of an item to store. `server` (or any internet field)
// means an internet password; otherwise a generic one. Any other name is an extra
// attribute (secret-tool's `myapp x`), stored and matched as libsecret does
// (ItemAttributes.extras); Keygate's own names (keygate:*, xdg:*, generic …) are refused.

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
        help: "secret-tool's attribute/value pairs: \(names.joined(separator: ", ")), or any other name.",
        optional: true, variadic: true)

    /// Keygate's own names that are neither one of `names` nor a synonym: refused as attributes.
    static var reservedNames: [String] {
        ItemAttributes.ownAttributeNames.filter { !$0.contains(":") && !names.contains($0) && synonyms[$0] == nil }.sorted()
    }

    private(set) var values: [String: String] = [:]
    /// Attributes of other names, as given (secret-tool's names are case-sensitive).
    private(set) var extras: [String: String] = [:]
    /// Every pair as given, names unchanged, but the label and comment (not attributes in the
    /// Secret Service): how another program's items are matched (`foreignItems`).
    private(set) var asGiven: [String: String] = [:]

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
            if name != "label", name != "comment" { asGiven[rawName] = value }
            guard Self.names.contains(name) else {
                try addExtra(rawName, value, config, context)
                continue
            }
            if let earlier = values[name], earlier != value {
                throw context.usageError("attribute \(name) is given twice with different values", config)
            }
            try ItemOptions.checkName(value, name)
            values[name] = value
        }
    }

    /// An attribute of another name: kept as given, unless Keygate stores that name itself.
    private mutating func addExtra(_ name: String, _ value: String, _ config: CommandConfiguration,
                                   _ context: CommandContext) throws {
        if ItemAttributes.providerAttributeNames.contains(name) {
            throw context.usageError("attribute '\(name)' is one KeePassXC keeps for its own entries: choose another name", config)
        }
        guard ItemAttributes.isExtraName(name) else {
            throw context.usageError("""
                attribute '\(name)' is one Keygate keeps itself (names starting keygate: or xdg:, and \
                \(Self.reservedNames.joined(separator: ", "))): choose another name
                """, config)
        }
        try ItemOptions.checkName(name, "attribute name")
        try ItemOptions.checkName(value, name)
        if let earlier = extras[name], earlier != value {
            throw context.usageError("attribute \(name) is given twice with different values", config)
        }
        extras[name] = value
    }

    var isEmpty: Bool { values.isEmpty && extras.isEmpty }
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
        q.extras = extras
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

    /// The exact item `store` writes: service and account, or server and account. As secret-tool
    /// stores under any attributes: without an account the account is empty, and without a
    /// service (or server) the service is the extra attributes, `name=value` joined by commas in
    /// name order (`store myapp x` stores the generic item "myapp=x"), so each set is its own item.
    func identity(_ config: CommandConfiguration, _ context: CommandContext) throws -> ItemIdentity {
        let account = values["account"] ?? ""
        if isInternet {
            guard let server = values["server"] ?? values["service"] else {
                throw context.usageError("\(config.commandName) of an internet password needs the server attribute", config)
            }
            return .internet(server: server, account: account, protocol: try protocolValue(), port: try portValue() ?? 0,
                             path: values["path"] ?? "", securityDomain: values["security-domain"] ?? "",
                             authenticationType: try authTypeValue())
        }
        guard let service = values["service"] ?? extrasAsService else {
            throw context.usageError("""
                \(config.commandName) needs a service attribute (service NAME), or any attribute of your own (myapp NAME)
                """, config)
        }
        return .generic(service: service, account: account)
    }

    /// The extra attributes as one service name: `a=1,b=2`, in name order; nil when there are none.
    var extrasAsService: String? {
        extras.isEmpty ? nil : extras.keys.sorted().map { $0 + "=" + (extras[$0] ?? "") }.joined(separator: ",")
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
