// Refuses hostile item fields before they reach the Secret Service: a NUL byte (D-Bus strings
// cannot hold one, and libsecret's tools read attributes as C strings, so "a\0b" would be stored, found and deleted as "a": another
// item), and oversize names and attributes (Secret Service items are not a data store).
// Applied by KeychainOperations to what is added, updated and searched for. Pure code.

package enum ItemFieldLimits {
    /// Service, account, server, path, security domain: as the CLI's own limit.
    static let maximumNameBytes = 1024
    /// Label, comment, description, access group, and kSecAttrGeneric's bytes.
    static let maximumAttributeBytes = 4096

    package static func check(_ a: ItemAttributes) throws {
        for field in ItemField.allCases { try check(field, a[field]) }
    }

    package static func check(identity i: ItemIdentity) throws {
        for field in ItemField.primaryKey(of: i.itemClass) { try check(field, i[field]) }
    }

    package static func check(_ q: ItemQuery) throws {
        for field in ItemField.allCases { try check(field, q[field]) }
    }

    package static func check(_ c: ItemChanges) throws {
        for field in ItemField.allCases { try check(field, c[field]) }
    }

    /// One field's text against its limit (ItemField.limit) and, for text, the NUL byte.
    private static func check(_ field: ItemField, _ value: String?) throws {
        guard let value, let limit = field.limit else { return }
        if field.kind == .bytes {
            try generic(Base64Text.decode(value), limit: limit)
        } else {
            try self.field(value, field.displayName, limit: limit)
        }
    }

    private static func field(_ value: String, _ what: String, limit: Int) throws {
        let count = value.utf8.count
        if count > limit {
            throw KeychainError.param("the \(what) is \(count) bytes long; the limit is \(limit): use a shorter \(what)")
        }
        if value.utf8.contains(0) {
            throw KeychainError.param("the \(what) contains a NUL byte, which the Secret Service cannot store: remove it")
        }
    }

    private static func generic(_ bytes: [UInt8]?, limit: Int) throws {
        guard let bytes, bytes.count > limit else { return }
        throw KeychainError.param("""
            the generic attribute is \(bytes.count) bytes; the limit is \(limit): keep large data in the secret \
            instead
            """)
    }
}
