// The typed properties over ItemField's text slots, written once for every value that keeps its
// fields as text: ItemQuery (what to match) and ItemChanges (what to set). Each property reads and
// writes the slot through the value's subscript, so the field list stays ItemField's table.

public protocol ItemFieldTextViews {
    /// A field's text, nil when the value leaves it open (a query) or alone (a change).
    subscript(field: ItemField) -> String? { get set }
}

extension ItemFieldTextViews {
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
    /// kSecAttrDescription.
    public var description: String? { get { self[.description] } set { self[.description] = newValue } }
    public var generic: [UInt8]? {
        get { self[.generic].flatMap(Base64Text.decode) }
        set { self[.generic] = newValue.map(Base64Text.encode) }
    }
    /// kSecAttrAccessGroup ("": no group); part of the primary key.
    public var accessGroup: String? { get { self[.accessGroup] } set { self[.accessGroup] = newValue } }
    /// kSecAttrSynchronizable; part of the primary key.
    public var synchronizable: Bool? {
        get { self[.synchronizable].map { $0 == "1" } }
        set { self[.synchronizable] = newValue.map(ItemField.text) }
    }
}
