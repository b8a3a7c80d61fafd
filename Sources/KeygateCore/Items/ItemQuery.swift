// A match over items' attributes: each field that is set must equal the item's (ItemField's
// text forms). An identity converts to the exact query for that one item. The fields are
// ItemField's table; the typed properties are ItemFieldTextViews' views of it. An access
// group of "" matches items in no group, nil every group; synchronizable nil matches both,
// and false also items stored before the attribute existed (matched client-side).

public struct ItemQuery: Sendable, Hashable, ItemFieldTextViews {
    public var itemClass: ItemClass?
    /// The fields this query sets, as text (ItemField.Kind): "" matches an item with the field
    /// unset (no protocol, no group, not synchronizable).
    public private(set) var fields = ItemFieldTexts()
    /// Other attributes (ItemAttributes.extras): each must be on the item with this value.
    public var extras: [String: String] = [:]

    /// A field's text, nil when the query leaves it open.
    public subscript(field: ItemField) -> String? {
        get { fields[field] }
        set { fields[field] = newValue }
    }

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

    /// The query that matches exactly the item with this primary key (every key field of its class).
    public init(exactly identity: ItemIdentity) {
        itemClass = identity.itemClass
        for field in ItemField.primaryKey(of: identity.itemClass) { fields[field] = identity[field] }
    }

    /// The one item's primary key when this query is `ItemQuery(exactly:)` of it, and sets nothing
    /// else; nil for any other query. A store with an index on the identity finds that item by it.
    public var exactIdentity: ItemIdentity? {
        guard let itemClass, extras.isEmpty else { return nil }
        let key = ItemField.primaryKey(of: itemClass)
        guard fields.count == key.count, key.allSatisfy({ fields[$0] != nil }),
              let identity = ItemIdentity(itemClass: itemClass, text: { fields[$0] }) else { return nil }
        // The round trip refuses text that is not the identity's own form (a port "080").
        return ItemQuery(exactly: identity) == self ? identity : nil
    }

    /// Whether the attributes satisfy every field this query sets.
    public func matches(_ a: ItemAttributes) -> Bool {
        if let v = itemClass, v != a.identity.itemClass { return false }
        for field in ItemField.ordered {
            if let value = fields[field], value != (a[field] ?? "") { return false }
        }
        for (name, value) in extras where a.extras[name] != value { return false }
        return true
    }
}
