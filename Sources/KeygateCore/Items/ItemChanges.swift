// What an update changes on matching items (Apple's SecItemUpdate attributesToUpdate):
// each field that is set replaces the item's value; nil leaves it alone. The fields are
// ItemField's table (the typed properties below are views of it), plus the protection.
// Changing a field of the sealed name, the accessibility or the access control means the
// secret must be sealed again; KeychainOperations.update(matching:set:secret:) decides and does that.

public struct ItemChanges: Sendable, Hashable {
    /// The fields this change sets, as text (ItemField.Kind).
    public private(set) var fields = ItemFieldTexts()
    public var accessibility: Accessibility?
    public var accessControl: AccessControl?

    public init() {}

    /// A field's new text, nil when the change leaves it alone.
    public subscript(field: ItemField) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }

    public var service: String? { get { self[.service] } set { self[.service] = newValue } }
    public var account: String? { get { self[.account] } set { self[.account] = newValue } }
    public var server: String? { get { self[.server] } set { self[.server] = newValue } }
    public var `protocol`: InternetProtocol? {
        get { self[.protocol].map(InternetProtocol.init(rawValue:)) }
        set { self[.protocol] = newValue?.rawValue }
    }
    public var port: UInt16? {
        get { self[.port].flatMap { UInt16($0) } }
        set { self[.port] = newValue.map { String($0) } }
    }
    public var path: String? { get { self[.path] } set { self[.path] = newValue } }
    public var securityDomain: String? { get { self[.securityDomain] } set { self[.securityDomain] = newValue } }
    public var authenticationType: AuthenticationType? {
        get { self[.authenticationType].map(AuthenticationType.init(rawValue:)) }
        set { self[.authenticationType] = newValue?.rawValue }
    }
    public var label: String? { get { self[.label] } set { self[.label] = newValue } }
    public var comment: String? { get { self[.comment] } set { self[.comment] = newValue } }
    public var description: String? { get { self[.description] } set { self[.description] = newValue } }
    public var generic: [UInt8]? {
        get { self[.generic].flatMap(Base64Text.decode) }
        set { self[.generic] = newValue.map(Base64Text.encode) }
    }
    /// Moves the item into this group ("": into no group); part of the primary key.
    public var accessGroup: String? { get { self[.accessGroup] } set { self[.accessGroup] = newValue } }
    public var synchronizable: Bool? {
        get { self[.synchronizable].map { $0 == "1" } }
        set { self[.synchronizable] = newValue.map(ItemField.text) }
    }

    /// The item's attributes after this change. Fields the item's class does not have are
    /// ignored (a generic password has no server).
    public func applied(to a: ItemAttributes) -> ItemAttributes {
        var out = a
        for field in fields.setFields where field.belongs(to: a.identity.itemClass) { out[field] = fields[field] }
        if let v = accessibility { out.accessibility = v }
        if let v = accessControl { out.accessControl = v }
        return out
    }
}
