// Maps Keygate's item model to the flat string attributes of the "io.keygate.Item"
// Secret Service schema and back. Pure Swift: the C side lives in GLibResources and
// SecretServiceStore.
import KeygateCore

package enum ItemAttributeCodec {
    static let schemaName = "io.keygate.Item"

    enum Key {
        static let itemClass = "keygate:class"
        static let service = "service"
        static let account = "account"
        static let server = "server"
        static let `protocol` = "protocol"
        static let port = "port"
        static let path = "path"
        static let securityDomain = "security-domain"
        static let authenticationType = "authentication-type"
        static let accessible = "keygate:accessible"
        /// The access control's text form (AccessControl.attributeValue); absent for an ungated item.
        static let access = "keygate:access"
        static let comment = "comment"
        static let generic = "generic"
        static let description = "description"
        static let accessGroup = "access-group"
        /// "1" for a synchronizable item; absent otherwise (Keygate never syncs: see ItemAttributes).
        static let synchronizable = "synchronizable"
        /// The creation date (seconds) in Keygate's own record (Apple's kSecAttrCreationDate is an
        /// item attribute too). SecretServiceStore writes it on every item, and a replacement keeps
        /// it: the Secret Service's own `Created` is the new object's. Items an earlier Keygate
        /// wrote may lack it (it was written on replacements only).
        static let created = "keygate:created"
        /// When Keygate last wrote the item (seconds; kSecAttrModificationDate). With `created` and
        /// `label` in the attributes, `list` reads one property an item instead of four
        /// (docs/DECISIONS.md, "A list reads one property an item"). Absent on items an earlier Keygate wrote:
        /// their dates come from the Secret Service's `Created` and `Modified`.
        static let modified = "keygate:modified"
        /// The item's label, as its `Label` property also holds it (kSecAttrLabel is an item
        /// attribute on Apple's side too). A label changed by another tool (seahorse sets the
        /// property only) is not Keygate's. Absent on items an earlier Keygate wrote: their
        /// label is the `Label` property.
        static let label = "keygate:label"
        /// Which of two items with one identity is the newer: SecretServiceStore's crash-safe
        /// update creates the replacement with the next generation before deleting the old item.
        static let generation = "keygate:generation"
    }

    /// The names of `Key`: each is one of ItemAttributes.ownAttributeNames (ItemAttributeCodecTests).
    static let keyNames: [String] = [
        Key.itemClass, Key.service, Key.account, Key.server, Key.protocol, Key.port, Key.path, Key.securityDomain,
        Key.authenticationType, Key.accessible, Key.access, Key.comment, Key.generic, Key.description, Key.accessGroup,
        Key.synchronizable, Key.created, Key.modified, Key.label, Key.generation,
    ]

    static func isExtraName(_ name: String) -> Bool { ItemAttributes.isExtraName(name) }

    /// The attributes stored for an item: every primary-key field of its class (empty or "0"
    /// when unset), so that `ItemQuery(exactly:)` is an exact attribute match.
    package static func encode(_ a: ItemAttributes) -> [String: String] {
        var out: [String: String] = [Key.itemClass: a.identity.itemClass.rawValue,
                                     Key.accessible: a.accessibility.rawValue]
        for field in a.identity.primaryKeyFields { out[field.name] = field.value }
        if let comment = a.comment { out[Key.comment] = comment }
        if let generic = a.generic { out[Key.generic] = Base64.encode(generic) }
        if let access = a.accessControl { out[Key.access] = access.attributeValue }
        if let description = a.description { out[Key.description] = description }
        if let group = a.accessGroup { out[Key.accessGroup] = group }
        if a.synchronizable { out[Key.synchronizable] = "1" }
        for (name, value) in a.extras where isExtraName(name) { out[name] = value }
        return out
    }

    /// `encoded` with Keygate's own record of the item's label and dates (Key.label,
    /// Key.created, Key.modified), which SecretServiceStore writes on every item.
    static func recorded(_ encoded: [String: String], label: String, created: UInt64, modified: UInt64) -> [String: String] {
        var out = encoded
        out[Key.label] = label
        out[Key.created] = String(created)
        out[Key.modified] = String(modified)
        return out
    }

    /// The attributes a query constrains. Nil fields are left open; the label is matched
    /// by the caller, client-side.
    static func encode(_ q: ItemQuery) -> [String: String] {
        var out: [String: String] = [:]
        if let v = q.itemClass { out[Key.itemClass] = v.rawValue }
        if let v = q.service { out[Key.service] = v }
        if let v = q.account { out[Key.account] = v }
        if let v = q.server { out[Key.server] = v }
        if let v = q.protocol { out[Key.protocol] = v.rawValue }
        if let v = q.port { out[Key.port] = String(v) }
        if let v = q.path { out[Key.path] = v }
        if let v = q.securityDomain { out[Key.securityDomain] = v }
        if let v = q.authenticationType { out[Key.authenticationType] = v.rawValue }
        if let v = q.description, !v.isEmpty { out[Key.description] = v }
        if let v = q.accessGroup, !v.isEmpty { out[Key.accessGroup] = v }
        // Only "1" is stored: false (absent) is matched by the caller, client-side.
        if q.synchronizable == true { out[Key.synchronizable] = "1" }
        for (name, value) in q.extras where isExtraName(name) { out[name] = value }
        return out
    }

    /// Rebuilds an item's attributes from what the Secret Service returned: the label and the
    /// dates are Keygate's own (Key.label, Key.created, Key.modified) where the attributes hold
    /// them, else `label` ("": not read), `created` and `modified` (0: not read). Nil when the
    /// attributes are not a valid Keygate item (never expected under our schema).
    static func decode(_ attrs: [String: String], label: String, created: UInt64, modified: UInt64) -> ItemAttributes? {
        guard let cls = attrs[Key.itemClass].flatMap(ItemClass.init(rawValue:)) else { return nil }
        guard let accessibility = Accessibility(rawValue: attrs[Key.accessible] ?? Accessibility.whenUnlocked.rawValue)
        else { return nil }
        let account = attrs[Key.account] ?? ""
        let identity: ItemIdentity
        switch cls {
        case .genericPassword:
            identity = .generic(service: attrs[Key.service] ?? "", account: account)
        case .internetPassword:
            let portText = attrs[Key.port] ?? "0"
            guard let port = UInt16(portText.isEmpty ? "0" : portText) else { return nil }
            let proto = attrs[Key.protocol].flatMap { $0.isEmpty ? nil : InternetProtocol(rawValue: $0) }
            let auth = attrs[Key.authenticationType].flatMap { $0.isEmpty ? nil : AuthenticationType(rawValue: $0) }
            identity = .internet(server: attrs[Key.server] ?? "", account: account, protocol: proto, port: port,
                                 path: attrs[Key.path] ?? "", securityDomain: attrs[Key.securityDomain] ?? "",
                                 authenticationType: auth)
        }
        var generic: [UInt8]?
        if let text = attrs[Key.generic] {
            guard let bytes = Base64.decode(text) else { return nil }
            generic = bytes
        }
        // An access attribute that does not parse makes the item undecodable (never silently ungated).
        var accessControl: AccessControl?
        if let text = attrs[Key.access] {
            guard let parsed = try? AccessControl(attributeValue: text) else { return nil }
            accessControl = parsed
        }
        return ItemAttributes(identity: identity, label: attrs[Key.label] ?? label, comment: attrs[Key.comment], generic: generic,
                              accessibility: accessibility, accessControl: accessControl,
                              created: attrs[Key.created].flatMap { UInt64($0) } ?? created,
                              modified: attrs[Key.modified].flatMap { UInt64($0) } ?? modified,
                              description: attrs[Key.description],
                              accessGroup: attrs[Key.accessGroup], synchronizable: attrs[Key.synchronizable] == "1",
                              extras: attrs.filter { isExtraName($0.key) })
    }

    /// The label the Secret Service shows for an item.
    package static func label(for a: ItemAttributes) -> String { a.label ?? a.identity.displayName }
}

/// Standard base64 (RFC 4648, with padding), so the library needs no Foundation.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = (b0 << 16) | (b1 << 8) | b2
            out.append(alphabet[Int((n >> 18) & 63)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int((n >> 6) & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): return 62
            case UInt8(ascii: "/"): return 63
            default: return nil
            }
        }
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            let pad = last ? chars[i..<i + 4].reversed().prefix { $0 == UInt8(ascii: "=") }.count : 0
            guard pad <= 2 else { return nil }
            var n: UInt32 = 0
            for j in 0..<4 {
                if j >= 4 - pad { n <<= 6; continue }
                guard let v = value(chars[i + j]) else { return nil }
                n = (n << 6) | v
            }
            out.append(UInt8((n >> 16) & 0xff))
            if pad < 2 { out.append(UInt8((n >> 8) & 0xff)) }
            if pad < 1 { out.append(UInt8(n & 0xff)) }
            i += 4
        }
        return out
    }
}
