// A match over items' attributes: each field that is set must equal the item's.
// An identity converts to the exact query for that one item.

public struct ItemQuery: Sendable, Hashable {
    public var itemClass: ItemClass?
    public var service: String?
    public var account: String?
    public var server: String?
    public var `protocol`: InternetProtocol?
    public var port: UInt16?
    public var path: String?
    public var securityDomain: String?
    public var authenticationType: AuthenticationType?
    public var label: String?
    /// kSecAttrDescription, kSecAttrAccessGroup: exact match when set.
    public var description: String?
    public var accessGroup: String?
    /// kSecAttrSynchronizable: nil matches both (kSecAttrSynchronizableAny), true or false only
    /// items with that flag (part of the primary key: `ItemQuery(exactly:)` sets it). False is
    /// matched client-side: items stored before the attribute existed count as false.
    public var synchronizable: Bool?
    /// Other attributes (ItemAttributes.extras): each must be on the item with this value.
    public var extras: [String: String] = [:]

    public init(itemClass: ItemClass? = nil, service: String? = nil, account: String? = nil, server: String? = nil,
                protocol: InternetProtocol? = nil, port: UInt16? = nil, path: String? = nil,
                securityDomain: String? = nil, authenticationType: AuthenticationType? = nil, label: String? = nil,
                description: String? = nil, accessGroup: String? = nil, synchronizable: Bool? = nil) {
        self.itemClass = itemClass
        self.service = service
        self.account = account
        self.server = server
        self.protocol = `protocol`
        self.port = port
        self.path = path
        self.securityDomain = securityDomain
        self.authenticationType = authenticationType
        self.label = label
        self.description = description
        self.accessGroup = accessGroup
        self.synchronizable = synchronizable
    }

    /// The query that matches exactly the item with this primary key (synchronizable included).
    public init(exactly identity: ItemIdentity) {
        self.init(itemClass: identity.itemClass, synchronizable: identity.synchronizable)
        switch identity.itemClass {
        case .genericPassword:
            service = identity.service
            account = identity.account
        case .internetPassword:
            server = identity.server
            account = identity.account
            self.protocol = identity.protocol ?? InternetProtocol(rawValue: "")
            port = identity.port
            path = identity.path
            securityDomain = identity.securityDomain
            authenticationType = identity.authenticationType ?? AuthenticationType(rawValue: "")
        }
    }

    /// The one item's primary key when this query is `ItemQuery(exactly:)` of it, and sets nothing
    /// else; nil for any other query. A store with an index on the identity finds that item by it.
    public var exactIdentity: ItemIdentity? {
        // Built from the key's fields; the round trip below refuses a query that sets anything else.
        guard let itemClass, let account, let synchronizable else { return nil }
        let identity: ItemIdentity
        switch itemClass {
        case .genericPassword:
            guard let service else { return nil }
            identity = .generic(service: service, account: account, synchronizable: synchronizable)
        case .internetPassword:
            guard let server, let `protocol`, let port, let path, let securityDomain, let authenticationType else { return nil }
            identity = .internet(server: server, account: account, protocol: `protocol`, port: port, path: path,
                                 securityDomain: securityDomain, authenticationType: authenticationType,
                                 synchronizable: synchronizable)
        }
        return ItemQuery(exactly: identity) == self ? identity : nil
    }

    /// Whether the attributes satisfy every field this query sets.
    public func matches(_ a: ItemAttributes) -> Bool {
        let id = a.identity
        if let v = itemClass, v != id.itemClass { return false }
        if let v = service, v != id.service { return false }
        if let v = account, v != id.account { return false }
        if let v = server, v != id.server { return false }
        if let v = self.protocol, v.rawValue != (id.protocol?.rawValue ?? "") { return false }
        if let v = port, v != id.port { return false }
        if let v = path, v != id.path { return false }
        if let v = securityDomain, v != id.securityDomain { return false }
        if let v = authenticationType, v.rawValue != (id.authenticationType?.rawValue ?? "") { return false }
        if let v = label, v != (a.label ?? "") { return false }
        if let v = description, v != (a.description ?? "") { return false }
        if let v = accessGroup, v != (a.accessGroup ?? "") { return false }
        if let v = synchronizable, v != a.synchronizable { return false }
        for (name, value) in extras where a.extras[name] != value { return false }
        return true
    }
}
