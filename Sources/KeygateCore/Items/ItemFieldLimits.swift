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
        try check(identity: a.identity)
        try attribute(a.label, "label")
        try attribute(a.comment, "comment")
        try attribute(a.description, "description")
        try attribute(a.accessGroup, "access group")
        try generic(a.generic)
    }

    package static func check(identity i: ItemIdentity) throws {
        try name(i.service, "service")
        try name(i.account, "account")
        try name(i.server, "server")
        try name(i.path, "path")
        try name(i.securityDomain, "security domain")
    }

    package static func check(_ q: ItemQuery) throws {
        try name(q.service, "service")
        try name(q.account, "account")
        try name(q.server, "server")
        try name(q.path, "path")
        try name(q.securityDomain, "security domain")
        try attribute(q.label, "label")
        try attribute(q.description, "description")
        try attribute(q.accessGroup, "access group")
    }

    package static func check(_ c: ItemChanges) throws {
        try name(c.service, "service")
        try name(c.account, "account")
        try name(c.server, "server")
        try name(c.path, "path")
        try name(c.securityDomain, "security domain")
        try attribute(c.label, "label")
        try attribute(c.comment, "comment")
        try attribute(c.description, "description")
        try attribute(c.accessGroup, "access group")
        try generic(c.generic)
    }

    private static func name(_ value: String?, _ what: String) throws {
        try field(value, what, limit: maximumNameBytes)
    }

    private static func attribute(_ value: String?, _ what: String) throws {
        try field(value, what, limit: maximumAttributeBytes)
    }

    private static func field(_ value: String?, _ what: String, limit: Int) throws {
        guard let value else { return }
        let count = value.utf8.count
        if count > limit {
            throw KeychainError.param("the \(what) is \(count) bytes long; the limit is \(limit): use a shorter \(what)")
        }
        if value.utf8.contains(0) {
            throw KeychainError.param("the \(what) contains a NUL byte, which the Secret Service cannot store: remove it")
        }
    }

    private static func generic(_ bytes: [UInt8]?) throws {
        guard let bytes, bytes.count > maximumAttributeBytes else { return }
        throw KeychainError.param("""
            the generic attribute is \(bytes.count) bytes; the limit is \(maximumAttributeBytes): keep large data in the secret \
            instead
            """)
    }
}
