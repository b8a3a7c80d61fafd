// An item's primary key, as Apple defines it: two items with the same identity are
// duplicates. Which fields it holds, in which order, is ItemField's table. Its name fields
// (class, then service and account, or the internet password's seven) are also the associated
// data of the item's sealed blob, so a blob copied onto another item fails to open.
// kSecAttrSynchronizable and kSecAttrAccessGroup are part of the key, as on Apple (two items
// that differ only in either are two items), but not of the sealed name: twins share it, so
// items stored before each joined the key open as they are (docs/DECISIONS.md,
// "Synchronizable joins the primary key" and "The access group joins the primary key").

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
    /// kSecAttrAccessGroup; "" for an item in no group (stored before groups were used, by the
    /// CLI, or by a program that declares none). Linux has no entitlements: it sorts items, it
    /// does not guard them (docs/SECURITY_COMPAT.md, "Access groups on Linux").
    public var accessGroup: String

    package init(itemClass: ItemClass, service: String, account: String, server: String, protocol: InternetProtocol?,
                 port: UInt16, path: String, securityDomain: String, authenticationType: AuthenticationType?,
                 synchronizable: Bool = false, accessGroup: String = "") {
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
        self.accessGroup = accessGroup
    }

    /// An identity of `itemClass` whose key fields are `text(field)` (ItemField's text forms;
    /// nil or absent: empty, zero, unset). Fields of the other class are left empty. Nil when a
    /// port is not a number from 0 to 65535.
    package init?(itemClass: ItemClass, text: (ItemField) -> String?) {
        self.init(itemClass: itemClass, service: "", account: "", server: "", protocol: nil, port: 0, path: "",
                  securityDomain: "", authenticationType: nil)
        for field in ItemField.primaryKey(of: itemClass) {
            guard let value = text(field) else { continue }
            guard set(field, value) else { return nil }
        }
    }

    public static func generic(service: String, account: String, synchronizable: Bool = false,
                               accessGroup: String = "") -> ItemIdentity {
        ItemIdentity(itemClass: .genericPassword, service: service, account: account, server: "", protocol: nil,
                     port: 0, path: "", securityDomain: "", authenticationType: nil, synchronizable: synchronizable,
                     accessGroup: accessGroup)
    }

    public static func internet(server: String, account: String, protocol: InternetProtocol? = nil, port: UInt16 = 0,
                                path: String = "", securityDomain: String = "",
                                authenticationType: AuthenticationType? = nil, synchronizable: Bool = false,
                                accessGroup: String = "") -> ItemIdentity {
        ItemIdentity(itemClass: .internetPassword, service: "", account: account, server: server, protocol: `protocol`,
                     port: port, path: path, securityDomain: securityDomain, authenticationType: authenticationType,
                     synchronizable: synchronizable, accessGroup: accessGroup)
    }

    /// A key field's text form (ItemField.Kind): "" for an unset code, "0" for no port, "1" or ""
    /// for the flag. Nil for a field that is not a key field of any class.
    public subscript(field: ItemField) -> String? {
        switch field {
        case .service: return service
        case .account: return account
        case .server: return server
        case .protocol: return self.protocol?.rawValue ?? ""
        case .port: return String(port)
        case .path: return path
        case .securityDomain: return securityDomain
        case .authenticationType: return authenticationType?.rawValue ?? ""
        case .synchronizable: return ItemField.text(synchronizable)
        case .accessGroup: return accessGroup
        case .label, .comment, .description, .generic: return nil
        }
    }

    /// Sets a key field from its text form; false when the text is not one of the field's
    /// (a port that is not a number) or the field is not a key field.
    @discardableResult
    package mutating func set(_ field: ItemField, _ value: String) -> Bool {
        switch field {
        case .service: service = value
        case .account: account = value
        case .server: server = value
        case .protocol: self.protocol = value.isEmpty ? nil : InternetProtocol(rawValue: value)
        case .port:
            guard let n = UInt16(value.isEmpty ? "0" : value) else { return false }
            port = n
        case .path: path = value
        case .securityDomain: securityDomain = value
        case .authenticationType: authenticationType = value.isEmpty ? nil : AuthenticationType(rawValue: value)
        case .synchronizable: synchronizable = value == "1"
        case .accessGroup: accessGroup = value
        case .label, .comment, .description, .generic: return false
        }
        return true
    }

    /// The name fields of the primary key for this class, in a fixed order (ItemField.sealedName;
    /// the key's tail, synchronizable and the access group, is stored as attributes of its own and
    /// is not in the sealed name).
    package var primaryKeyFields: [(name: String, value: String)] {
        ItemField.sealedName(of: itemClass).map { ($0.attributeName, self[$0] ?? "") }
    }

    /// An unambiguous byte encoding of the item's name (every key field but the tail): the
    /// associated data for sealing, and the gatekeeper's input for the item's gate keys.
    /// Each field is length-prefixed, so no choice of strings can collide.
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = Array("keygate.identity.v1".utf8)
        out.reserveCapacity(96)
        Self.append(itemClass.rawValue, to: &out)
        for field in ItemField.sealedName(of: itemClass) {
            Self.append(field.attributeName, to: &out)
            Self.append(self[field] ?? "", to: &out)
        }
        return out
    }

    /// The whole primary key as bytes: the name, then each field of the key's tail that is set
    /// (ItemField.keyTail: "synchronizable" = "1", then "access-group" = the group). An item with
    /// neither has its name as its key, byte for byte, so keys stored before they joined the key
    /// still match (the embedded store's UNIQUE index).
    public var storeKey: [UInt8] {
        var out = canonicalBytes
        for field in ItemField.keyTail {
            let value = self[field] ?? ""
            if value.isEmpty { continue }
            Self.append(field.attributeName, to: &out)
            Self.append(value, to: &out)
        }
        return out
    }

    /// One field: its length (4 bytes, big-endian), then its UTF-8 bytes.
    /// Appended in place: no array for the length or for the text (the bytes are made on every
    /// item a read opens).
    private static func append(_ s: String, to out: inout [UInt8]) {
        let n = UInt32(s.utf8.count)
        out.append(UInt8(n >> 24))
        out.append(UInt8((n >> 16) & 0xff))
        out.append(UInt8((n >> 8) & 0xff))
        out.append(UInt8(n & 0xff))
        out.append(contentsOf: s.utf8)
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
