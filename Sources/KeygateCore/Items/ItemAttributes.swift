// Everything about an item except its secret: what `list` shows and what
// `attributes(for:)` returns. Reading these never needs an unlock.

public struct ItemAttributes: Sendable, Hashable {
    public var identity: ItemIdentity
    public var label: String?
    public var comment: String?
    /// kSecAttrGeneric: small application data, stored in the clear as an attribute.
    public var generic: [UInt8]?
    /// kSecAttrDescription: a user-visible kind of item ("Web password"), stored as an attribute.
    public var description: String?
    /// kSecAttrAccessGroup, part of the primary key (`identity.accessGroup`) as on Apple; nil for
    /// an item in no group. Linux has no entitlements, so any process of the user may name any
    /// group: it sorts items, it does not guard them.
    public var accessGroup: String? {
        get { identity.accessGroup.isEmpty ? nil : identity.accessGroup }
        set { identity.accessGroup = newValue ?? "" }
    }
    /// kSecAttrSynchronizable, part of the primary key (`identity.synchronizable`) as on
    /// Apple: a query without it finds only non-synchronizable items, kSecAttrSynchronizableAny
    /// finds both. Keygate never syncs anything: a synchronizable item stays on this machine.
    public var synchronizable: Bool {
        get { identity.synchronizable }
        set { identity.synchronizable = newValue }
    }
    public var accessibility: Accessibility
    /// The item's access control (Apple's kSecAttrAccessControl); nil for an ungated item.
    public var accessControl: AccessControl?
    /// Seconds since 1970, as the Secret Service records them.
    public var created: UInt64
    public var modified: UInt64
    /// Attributes of any other name (secret-tool's and libsecret's `myapp x`, `keygate add --attr
    /// NAME=VALUE`), stored and matched as the Secret Service stores them; never part of the
    /// identity, never sealed. Names Keygate uses itself are not among them (ItemAttributeCodec).
    public var extras: [String: String] = [:]
    /// The label of a gated item as stored: sealed to its class key (KeyUnlocker+Labels), so the
    /// store's file holds no plaintext of it. `label` is the opened text while the class key is
    /// cached, nil while it is not. Nil for an item whose label is stored in the clear.
    package var sealedLabel: [UInt8]?

    /// The attribute names Keygate stores itself (the Secret Service's and the embedded store's
    /// `io.keygate.Item` attributes), which an extra attribute may not take.
    public static let ownAttributeNames: Set<String> = Set(ItemField.allCases.map(\.attributeName)).union([
        "keygate:class", "keygate:accessible", "keygate:access", "keygate:created", "keygate:modified", "keygate:generation",
        "keygate:sealed-label",
    ])

    /// The attributes KeePassXC adds to every item it keeps and owns (its entry's fields, as its
    /// Secret Service shows them). Never an item's extras: writing them back is refused by KeePassXC
    /// ("Uuid", "Path" are its own), so an `add -U` that kept them would fail after the new secret is in.
    public static let providerAttributeNames: Set<String> = [
        "Title", "UserName", "URL", "Notes", "Path", "Uuid", "FDO_SECRETS_CONTENT_TYPE",
    ]

    /// Whether `name` may be an extra attribute: not one of Keygate's own, nor in the `keygate:`
    /// or `xdg:` namespaces (libsecret's `xdg:schema`), nor one a provider keeps for itself.
    public static func isExtraName(_ name: String) -> Bool {
        !name.isEmpty && !ownAttributeNames.contains(name) && !providerAttributeNames.contains(name)
            && !name.hasPrefix("keygate:") && !name.hasPrefix("xdg:")
    }

    public init(identity: ItemIdentity, label: String? = nil, comment: String? = nil, generic: [UInt8]? = nil,
                accessibility: Accessibility = .whenUnlocked, accessControl: AccessControl? = nil,
                created: UInt64 = 0, modified: UInt64 = 0, description: String? = nil,
                accessGroup: String? = nil, synchronizable: Bool? = nil, extras: [String: String] = [:]) {
        self.identity = identity
        self.extras = extras
        self.label = label
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.accessControl = accessControl
        self.created = created
        self.modified = modified
        self.description = description
        // Given, each sets the identity's field; nil keeps the identity's.
        if let accessGroup { self.identity.accessGroup = accessGroup }
        if let synchronizable { self.identity.synchronizable = synchronizable }
    }

    /// A field's text form (ItemField.Kind); nil when the item does not have it set. Key fields
    /// are always set (ItemIdentity's subscript); the access group is nil when the item has none.
    public subscript(field: ItemField) -> String? {
        get {
            switch field {
            case .label: return label
            case .comment: return comment
            case .description: return description
            case .generic: return generic.map(Base64Text.encode)
            case .accessGroup: return accessGroup
            default: return identity[field]
            }
        }
        set {
            switch field {
            case .label: label = newValue
            case .comment: comment = newValue
            case .description: description = newValue
            case .generic: generic = newValue.flatMap(Base64Text.decode)
            default: identity.set(field, newValue ?? "")
            }
        }
    }
}
