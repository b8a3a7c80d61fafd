// An item's primary key, as Apple defines it: two items with the same identity are
// duplicates. The identity is also the associated data of the item's sealed blob,
// so a blob copied onto another item fails to open.

public struct ItemIdentity: Sendable, Hashable {
    public var itemClass: ItemClass
    /// Generic passwords: kSecAttrService.
    public var service: String
    /// Both classes: kSecAttrAccount.
    public var account: String
    /// Internet passwords: kSecAttrServer, kSecAttrProtocol, kSecAttrPort, kSecAttrPath,
    /// kSecAttrSecurityDomain, kSecAttrAuthenticationType. Empty or zero when not set.
    public var server: String
    public var `protocol`: InternetProtocol?
    public var port: UInt16
    public var path: String
    public var securityDomain: String
    public var authenticationType: AuthenticationType?

    package init(itemClass: ItemClass, service: String, account: String, server: String, protocol: InternetProtocol?,
                 port: UInt16, path: String, securityDomain: String, authenticationType: AuthenticationType?) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.server = server
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.securityDomain = securityDomain
        self.authenticationType = authenticationType
    }

    public static func generic(service: String, account: String) -> ItemIdentity {
        ItemIdentity(itemClass: .genericPassword, service: service, account: account, server: "", protocol: nil,
                     port: 0, path: "", securityDomain: "", authenticationType: nil)
    }

    public static func internet(server: String, account: String, protocol: InternetProtocol? = nil, port: UInt16 = 0,
                                path: String = "", securityDomain: String = "",
                                authenticationType: AuthenticationType? = nil) -> ItemIdentity {
        ItemIdentity(itemClass: .internetPassword, service: "", account: account, server: server, protocol: `protocol`,
                     port: port, path: path, securityDomain: securityDomain, authenticationType: authenticationType)
    }

    /// The fields that make up the primary key for this class, in a fixed order.
    package var primaryKeyFields: [(name: String, value: String)] {
        switch itemClass {
        case .genericPassword:
            return [("service", service), ("account", account)]
        case .internetPassword:
            return [("server", server), ("account", account), ("protocol", `protocol`?.rawValue ?? ""),
                    ("port", String(port)), ("path", path), ("security-domain", securityDomain),
                    ("authentication-type", authenticationType?.rawValue ?? "")]
        }
    }

    /// An unambiguous byte encoding of the identity: the associated data for sealing.
    /// Each field is length-prefixed, so no choice of strings can collide.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = Array("keygate.identity.v1".utf8)
        func append(_ s: String) {
            let bytes = Array(s.utf8)
            let n = UInt32(bytes.count)
            out += [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
            out += bytes
        }
        append(itemClass.rawValue)
        for field in primaryKeyFields { append(field.name); append(field.value) }
        return out
    }

    /// A short human name for messages: "service/account" or "server/account".
    public var displayName: String {
        switch itemClass {
        case .genericPassword: return "\(service)/\(account)"
        case .internetPassword: return "\(server)/\(account)"
        }
    }
}
