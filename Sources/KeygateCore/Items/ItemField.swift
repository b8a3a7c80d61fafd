// The one description of an item's fields: for each, its kind, which classes have it, whether
// it is part of the primary key and of the sealed name, its attribute name (the Secret
// Service's io.keygate.Item attribute, and the `name` of its row in the embedded store's
// `attributes` table), and its length limit. ItemIdentity, ItemQuery, ItemChanges,
// ItemFieldLimits and ItemAttributeCodec are derived from this table: a new field is a case
// here, a row in each property below, and its storage in ItemIdentity (primary key) or
// ItemAttributes (everything else). Pure code.

public enum ItemField: String, CaseIterable, Sendable, Hashable {
    case service, account, server, `protocol`, port, path, securityDomain, authenticationType
    case synchronizable, accessGroup
    case label, comment, description, generic

    /// How a value is written as text (an attribute value, a match).
    public enum Kind: Sendable {
        /// As it is.
        case text
        /// A port number in decimal ("0" when unset).
        case port
        /// A four-character code (kSecAttrProtocol*, kSecAttrAuthenticationType*); "" when unset.
        case code
        /// "1" when set; "" (no attribute) when not.
        case flag
        /// Bytes, base64 (kSecAttrGeneric).
        case bytes
    }

    public var kind: Kind {
        switch self {
        case .port: return .port
        case .protocol, .authenticationType: return .code
        case .synchronizable: return .flag
        case .generic: return .bytes
        default: return .text
        }
    }

    /// The item's name fields for a class, in the order they are sealed (ItemIdentity.canonicalBytes):
    /// the associated data of the sealed blob and the gatekeeper's input for the item's gate keys.
    public static func sealedName(of itemClass: ItemClass) -> [ItemField] {
        switch itemClass {
        case .genericPassword: return genericName
        case .internetPassword: return internetName
        }
    }

    private static let genericName: [ItemField] = [.service, .account]
    private static let internetName: [ItemField] = [.server, .account, .protocol, .port, .path, .securityDomain, .authenticationType]

    /// The primary key's fields outside the sealed name, in the order ItemIdentity.storeKey appends
    /// them (each only when set): items stored before they joined the key keep their key bytes,
    /// and their sealed blobs open as they are (docs/DECISIONS.md).
    public static let keyTail: [ItemField] = [.synchronizable, .accessGroup]

    /// The whole primary key of a class: its sealed name, then the tail.
    public static func primaryKey(of itemClass: ItemClass) -> [ItemField] {
        switch itemClass {
        case .genericPassword: return genericKey
        case .internetPassword: return internetKey
        }
    }

    private static let genericKey = genericName + keyTail
    private static let internetKey = internetName + keyTail

    /// Whether the field is part of the primary key of `itemClass`.
    public func isPrimaryKey(of itemClass: ItemClass) -> Bool { Self.primaryKey(of: itemClass).contains(self) }

    /// Whether items of `itemClass` have the field at all (Apple: errSecNoSuchAttr when not).
    public func belongs(to itemClass: ItemClass) -> Bool {
        switch self {
        case .service: return itemClass == .genericPassword
        case .server, .protocol, .port, .path, .securityDomain, .authenticationType: return itemClass == .internetPassword
        default: return true
        }
    }

    /// Its attribute name in the stores (ItemAttributeCodec): the Secret Service's and the
    /// embedded store's `attributes.name`. The name fields are also their names in the sealed name.
    public var attributeName: String {
        switch self {
        case .service: return "service"
        case .account: return "account"
        case .server: return "server"
        case .protocol: return "protocol"
        case .port: return "port"
        case .path: return "path"
        case .securityDomain: return "security-domain"
        case .authenticationType: return "authentication-type"
        case .synchronizable: return "synchronizable"
        case .accessGroup: return "access-group"
        case .label: return "keygate:label"
        case .comment: return "comment"
        case .description: return "description"
        case .generic: return "generic"
        }
    }

    /// Whether a store matches the field by its attribute. The label is matched client-side
    /// (items an earlier Keygate wrote keep it in the Secret Service's Label property only), and
    /// an unset flag or empty text is stored as no attribute at all, so matching "" is client-side too.
    public func isMatchedByStore(_ value: String) -> Bool {
        switch self {
        case .label: return false
        case .synchronizable, .accessGroup, .description: return !value.isEmpty
        default: return true
        }
    }

    /// The longest value, in bytes (of the text; of the bytes for `.bytes`). Nil: not checked.
    public var limit: Int? {
        switch self {
        case .service, .account, .server, .path, .securityDomain: return ItemFieldLimits.maximumNameBytes
        case .accessGroup, .label, .comment, .description, .generic: return ItemFieldLimits.maximumAttributeBytes
        case .protocol, .port, .authenticationType, .synchronizable: return nil
        }
    }

    /// The field in messages: "security domain".
    public var displayName: String {
        switch self {
        case .securityDomain: return "security domain"
        case .authenticationType: return "authentication type"
        case .accessGroup: return "access group"
        default: return rawValue
        }
    }

    static func text(_ flag: Bool) -> String { flag ? "1" : "" }
}
