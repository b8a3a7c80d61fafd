// Maps Keygate's item model to the flat string attributes of the "io.keygate.Item"
// Secret Service schema and back, which the embedded store keeps too. The item's fields and
// their attribute names are ItemField's table; the rest (class, protection, dates, generation)
// are named here. Pure Swift: the D-Bus side lives in SecretServiceStore.
import KeygateCore

package enum ItemAttributeCodec {
    static let schemaName = "io.keygate.Item"

    /// The attributes that are not item fields (those are named by ItemField.attributeName).
    enum Key {
        static let itemClass = "keygate:class"
        static let accessible = "keygate:accessible"
        /// The access control's text form (AccessControl.attributeValue); absent for an ungated item.
        static let access = "keygate:access"
        /// The creation date (seconds) in Keygate's own record (Apple's kSecAttrCreationDate is an
        /// item attribute too). SecretServiceStore writes it on every item, and a replacement keeps
        /// it: the Secret Service's own `Created` is the new object's. Items an earlier Keygate
        /// wrote may lack it (it was written on replacements only).
        static let created = "keygate:created"
        /// When Keygate last wrote the item (seconds; kSecAttrModificationDate). With `created` and
        /// the label in the attributes, `list` reads one property an item instead of four
        /// (docs/DECISIONS.md, "A list reads one property an item"). Absent on items an earlier Keygate wrote:
        /// their dates come from the Secret Service's `Created` and `Modified`.
        static let modified = "keygate:modified"
        /// The item's label (ItemField.label, "keygate:label"), as its `Label` property also holds
        /// it (kSecAttrLabel is an item attribute on Apple's side too). A label changed by another
        /// tool (seahorse sets the property only) is not Keygate's. Absent on items an earlier
        /// Keygate wrote: their label is the `Label` property.
        static let label = ItemField.label.attributeName
        /// Which of two items with one identity is the newer: SecretServiceStore's crash-safe
        /// update creates the replacement with the next generation before deleting the old item.
        static let generation = "keygate:generation"
        /// A gated item's label, sealed (ItemAttributes.sealedLabel), as base64. With it, the
        /// plaintext label places (the embedded store's column, the provider's `Label` and
        /// Key.label) hold the identity's display name only, which the attributes already show.
        static let sealedLabel = "keygate:sealed-label"
    }

    /// Every attribute name Keygate writes: each is one of ItemAttributes.ownAttributeNames (ItemAttributeCodecTests).
    static let keyNames: [String] = [Key.itemClass, Key.accessible, Key.access, Key.created, Key.modified, Key.generation,
                                     Key.sealedLabel]
        + ItemField.allCases.map(\.attributeName)

    static func isExtraName(_ name: String) -> Bool { ItemAttributes.isExtraName(name) }

    /// The attributes stored for an item: every name field of its class (empty or "0" when
    /// unset), so that `ItemQuery(exactly:)` is an exact attribute match, and each other field
    /// that is set (an unset flag, group or code: no attribute). The label is not among them: it is
    /// Keygate's record (`recorded`), written by the Secret Service store, kept by the embedded
    /// store in its own column.
    package static func encode(_ a: ItemAttributes) -> [String: String] {
        var out: [String: String] = [Key.itemClass: a.identity.itemClass.rawValue,
                                     Key.accessible: a.accessibility.rawValue]
        for field in ItemField.sealedName(of: a.identity.itemClass) { out[field.attributeName] = a[field] ?? "" }
        for field in storedFields {
            guard let value = a[field], !(value.isEmpty && field.kind == .flag) else { continue }
            out[field.attributeName] = value
        }
        if let access = a.accessControl { out[Key.access] = access.attributeValue }
        for (name, value) in a.extras where isExtraName(name) { out[name] = value }
        if let sealed = a.sealedLabel { out[Key.sealedLabel] = Base64Text.encode(sealed) }
        return out
    }

    /// The fields stored beside the name when set: the key's tail, then the item's own attributes.
    private static let storedFields: [ItemField] = ItemField.keyTail + [.comment, .description, .generic]

    /// `encoded` with Keygate's own record of the item's label and dates (Key.label,
    /// Key.created, Key.modified), which SecretServiceStore writes on every item.
    static func recorded(_ encoded: [String: String], label: String, created: UInt64, modified: UInt64) -> [String: String] {
        var out = encoded
        out[Key.label] = label
        out[Key.created] = String(created)
        out[Key.modified] = String(modified)
        return out
    }

    /// The attributes a query constrains. Nil fields are left open; the label, and "" for a
    /// field stored only when set, are matched by the caller, client-side (ItemField.isMatchedByStore).
    static func encode(_ q: ItemQuery) -> [String: String] {
        var out: [String: String] = [:]
        if let v = q.itemClass { out[Key.itemClass] = v.rawValue }
        for field in ItemField.ordered {
            if let value = q[field], field.isMatchedByStore(value) { out[field.attributeName] = value }
        }
        for (name, value) in q.extras where isExtraName(name) { out[name] = value }
        return out
    }

    /// Rebuilds an item's attributes from what the Secret Service returned: the label and the
    /// dates are Keygate's own (Key.label, Key.created, Key.modified) where the attributes hold
    /// them, else `label` ("": not read), `created` and `modified` (0: not read). Nil when the
    /// attributes are not a valid Keygate item (never expected under our schema).
    static func decode(_ attrs: [String: String], label: String, created: UInt64, modified: UInt64) -> ItemAttributes? {
        guard let cls = attrs[Key.itemClass].flatMap(ItemClass.init(rawValue:)) else { return nil }
        guard let accessibility = Accessibility(rawValue: attrs[Key.accessible] ?? Accessibility.whenUnlocked.rawValue)
        else { return nil }
        guard let identity = ItemIdentity(itemClass: cls, text: { attrs[$0.attributeName] }) else { return nil }
        // An access attribute that does not parse makes the item undecodable (never silently ungated).
        var accessControl: AccessControl?
        if let text = attrs[Key.access] {
            guard let parsed = try? AccessControl(attributeValue: text) else { return nil }
            accessControl = parsed
        }
        var out = ItemAttributes(identity: identity, label: attrs[Key.label] ?? label, accessibility: accessibility,
                                 accessControl: accessControl,
                                 created: attrs[Key.created].flatMap { UInt64($0) } ?? created,
                                 modified: attrs[Key.modified].flatMap { UInt64($0) } ?? modified,
                                 extras: attrs.filter { isExtraName($0.key) })
        for field in [ItemField.comment, .description] { out[field] = attrs[field.attributeName] }
        // A sealed label: the plaintext places hold the display name only, never the label; the
        // operations open it (or leave it nil while the class key is not cached).
        if let text = attrs[Key.sealedLabel] {
            guard let sealed = Base64Text.decode(text), !sealed.isEmpty else { return nil }
            out.sealedLabel = sealed
            out.label = nil
        }
        if let text = attrs[ItemField.generic.attributeName] {
            guard let bytes = Base64Text.decode(text) else { return nil }
            out.generic = bytes
        }
        return out
    }

    /// The label stored in the clear for an item (the embedded store's column, the Secret
    /// Service's `Label`): its label, or its identity's display name when it has none or when its
    /// label is sealed (a gated item's, ItemAttributes.sealedLabel).
    package static func label(for a: ItemAttributes) -> String {
        a.sealedLabel != nil ? a.identity.displayName : a.label ?? a.identity.displayName
    }
}
