// What an update changes on matching items (Apple's SecItemUpdate attributesToUpdate):
// each field that is set replaces the item's value; nil leaves it alone. The fields are
// ItemField's table (the typed properties are ItemFieldTextViews' views of it), plus the
// protection. An access group of "" moves the item into no group.
// Changing a field of the sealed name, the accessibility or the access control means the
// secret must be sealed again; KeychainOperations.update(matching:set:secret:) decides and does that.

public struct ItemChanges: Sendable, Hashable, ItemFieldTextViews {
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
