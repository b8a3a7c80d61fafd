// An item's primary key, as Apple defines it: two items with the same identity are
// duplicates. Its name fields (class, then service and account, or the internet
// password's seven) are also the associated data of the item's sealed blob, so a blob
// copied onto another item fails to open. kSecAttrSynchronizable is part of the key, as
// on Apple (a synchronizable and a non-synchronizable item of one service and account
// are two items), but not of the sealed name: twins share it, so items stored before the
// flag joined the key open as they are (docs/DECISIONS.md, "Synchronizable joins the
// primary key").

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
    /// kSecAttrSynchronizable. Keygate never syncs anything; the flag only tells twins apart.
    public var synchronizable: Bool

    package init(itemClass: ItemClass, service: String, account: String, server: String, protocol: InternetProtocol?,
                 port: UInt16, path: String, securityDomain: String, authenticationType: AuthenticationType?,
                 synchronizable: Bool = false) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.server = server
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.securityDomain = securityDomain
        self.authenticationType = authenticationType
        self.synchronizable = synchronizable
    }

    public static func generic(service: String, account: String, synchronizable: Bool = false) -> ItemIdentity {
        ItemIdentity(itemClass: .genericPassword, service: service, account: account, server: "", protocol: nil,
                     port: 0, path: "", securityDomain: "", authenticationType: nil, synchronizable: synchronizable)
    }

    public static func internet(server: String, account: String, protocol: InternetProtocol? = nil, port: UInt16 = 0,
                                path: String = "", securityDomain: String = "",
                                authenticationType: AuthenticationType? = nil, synchronizable: Bool = false) -> ItemIdentity {
        ItemIdentity(itemClass: .internetPassword, service: "", account: account, server: server, protocol: `protocol`,
                     port: port, path: path, securityDomain: securityDomain, authenticationType: authenticationType,
                     synchronizable: synchronizable)
    }

    /// The name fields of the primary key for this class, in a fixed order (synchronizable,
    /// the key's last part, is stored as its own attribute and is not in the sealed name).
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

    /// An unambiguous byte encoding of the item's name (every field but synchronizable): the
    /// associated data for sealing, and the gatekeeper's input for the item's gate keys.
    /// Each field is length-prefixed, so no choice of strings can collide.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = Array("keygate.identity.v1".utf8)
        Self.append(itemClass.rawValue, to: &out)
        for field in primaryKeyFields { Self.append(field.name, to: &out); Self.append(field.value, to: &out) }
        return out
    }

    /// The whole primary key as bytes: the name, then the field "synchronizable" = "1" for a
    /// synchronizable item. A non-synchronizable item's key is its name, byte for byte, so keys
    /// stored before the flag joined the key still match (the embedded store's UNIQUE index).
    public var storeKey: [UInt8] {
        var out = canonicalBytes
        if synchronizable { Self.append("synchronizable", to: &out); Self.append("1", to: &out) }
        return out
    }

    /// One field: its length (4 bytes, big-endian), then its UTF-8 bytes.
    private static func append(_ s: String, to out: inout [UInt8]) {
        let bytes = Array(s.utf8)
        let n = UInt32(bytes.count)
        out += [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)]
        out += bytes
    }

    /// A short human name for messages and default labels: "service/account" or
    /// "server/account" (twins share it).
    public var displayName: String {
        switch itemClass {
        case .genericPassword: return "\(service)/\(account)"
        case .internetPassword: return "\(server)/\(account)"
        }
    }
}
