// What an update changes on matching items (Apple's SecItemUpdate attributesToUpdate):
// each field that is set replaces the item's value; nil leaves it alone. Changing a
// primary-key field, the accessibility or the access control means the secret must be
// sealed again; KeychainOperations.update(matching:set:secret:) decides and does that.

public struct ItemChanges: Sendable, Hashable {
    public var service: String?
    public var account: String?
    public var server: String?
    public var `protocol`: InternetProtocol?
    public var port: UInt16?
    public var path: String?
    public var securityDomain: String?
    public var authenticationType: AuthenticationType?
    public var label: String?
    public var comment: String?
    public var description: String?
    public var generic: [UInt8]?
    public var accessGroup: String?
    public var synchronizable: Bool?
    public var accessibility: Accessibility?
    public var accessControl: AccessControl?

    public init() {}

    /// The item's attributes after this change. Fields of the other class's primary key
    /// are ignored (a generic password has no server).
    public func applied(to a: ItemAttributes) -> ItemAttributes {
        var out = a
        switch a.identity.itemClass {
        case .genericPassword:
            if let v = service { out.identity.service = v }
        case .internetPassword:
            if let v = server { out.identity.server = v }
            if let v = self.protocol { out.identity.protocol = v.rawValue.isEmpty ? nil : v }
            if let v = port { out.identity.port = v }
            if let v = path { out.identity.path = v }
            if let v = securityDomain { out.identity.securityDomain = v }
            if let v = authenticationType { out.identity.authenticationType = v.rawValue.isEmpty ? nil : v }
        }
        if let v = account { out.identity.account = v }
        if let v = label { out.label = v }
        if let v = comment { out.comment = v }
        if let v = description { out.description = v }
        if let v = generic { out.generic = v }
        if let v = accessGroup { out.accessGroup = v }
        if let v = synchronizable { out.synchronizable = v }
        if let v = accessibility { out.accessibility = v }
        if let v = accessControl { out.accessControl = v }
        return out
    }
}
