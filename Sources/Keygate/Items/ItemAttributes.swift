// Everything about an item except its secret: what `list` shows and what
// `attributes(for:)` returns. Reading these never needs an unlock.

public struct ItemAttributes: Sendable, Hashable {
    public var identity: ItemIdentity
    public var label: String?
    public var comment: String?
    /// kSecAttrGeneric: small application data, stored in the clear as an attribute.
    public var generic: [UInt8]?
    public var accessibility: Accessibility
    /// The item's access control (Apple's kSecAttrAccessControl); nil for an ungated item.
    public var accessControl: AccessControl?
    /// Seconds since 1970, as the Secret Service records them.
    public var created: UInt64
    public var modified: UInt64

    public init(identity: ItemIdentity, label: String? = nil, comment: String? = nil, generic: [UInt8]? = nil,
                accessibility: Accessibility = .whenUnlocked, accessControl: AccessControl? = nil,
                created: UInt64 = 0, modified: UInt64 = 0) {
        self.identity = identity
        self.label = label
        self.comment = comment
        self.generic = generic
        self.accessibility = accessibility
        self.accessControl = accessControl
        self.created = created
        self.modified = modified
    }
}
