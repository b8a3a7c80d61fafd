// Translates an Apple query dictionary (kSec* keys, loosely typed values) into Keygate's
// terms: the item class and attributes, an ItemQuery to match with, the changes of an
// update, what to return, how many, and how to authenticate. As on Apple, an unknown key
// or another class's attribute is errSecNoSuchAttr and a value of the wrong type errSecParam;
// keys Apple defines that Keygate does not implement are errSecUnimplemented; none is ignored. Delegates the
// model to Keygate's Items types; values are read by SecValue.
internal import Keygate

/// A SecItem call's failure: the status to return and Keygate's advice.
struct SecFailure: Error {
    let status: OSStatus
    let message: String

    static func param(_ message: String) -> SecFailure { SecFailure(status: errSecParam, message: message) }
}

struct SecItemQuery {
    enum Synchronizable { case no, yes, any }
    enum Limit: Equatable { case one, all, count(Int) }
    enum AuthenticationUI { case allow, fail, skip }

    var itemClass: ItemClass?
    /// The item fields the dictionary named (kSecAttr* keys in `fieldKeys`), as ItemField's text.
    var fields: [ItemField: String] = [:]
    var synchronizable: Synchronizable?
    var accessibility: Accessibility?
    var accessControl: SecAccessControl?
    var creationDate: Date?
    var modificationDate: Date?

    var valueData: Data?
    var persistentRef: ItemIdentity?
    /// A persistent reference made before the access group joined the primary key: it names
    /// its item in whichever group it is.
    var persistentRefInAnyGroup = false
    /// The environment of this call, read once at the Apple layer's edge (KeygateSecurityConfiguration).
    let environment = KeygateSecurityConfiguration.environment()
    /// The access groups the process declared (SecAccessGroups); nil when none.
    let declaredGroups: [String]?
    var returnData = false
    var returnAttributes = false
    var returnPersistentRef = false
    var returnRef = false
    var limit: Limit?
    var context: LAContext?
    var authenticationUI = AuthenticationUI.allow
    var operationPrompt: String?
    /// Every key the dictionary held.
    private(set) var keys: Set<String> = []

    /// The kSecAttr* keys of item fields (ItemField's table), but kSecAttrSynchronizable, which also
    /// takes kSecAttrSynchronizableAny.
    static let fieldKeys: [String: ItemField] = [
        kSecAttrService: .service, kSecAttrAccount: .account, kSecAttrServer: .server, kSecAttrProtocol: .protocol,
        kSecAttrPort: .port, kSecAttrPath: .path, kSecAttrSecurityDomain: .securityDomain,
        kSecAttrAuthenticationType: .authenticationType, kSecAttrAccessGroup: .accessGroup, kSecAttrLabel: .label,
        kSecAttrComment: .comment, kSecAttrDescription: .description, kSecAttrGeneric: .generic,
    ]

    /// The Apple key of each field, for messages.
    static let fieldNames: [ItemField: String] = [
        .service: "kSecAttrService", .account: "kSecAttrAccount", .server: "kSecAttrServer", .protocol: "kSecAttrProtocol",
        .port: "kSecAttrPort", .path: "kSecAttrPath", .securityDomain: "kSecAttrSecurityDomain",
        .authenticationType: "kSecAttrAuthenticationType", .accessGroup: "kSecAttrAccessGroup", .label: "kSecAttrLabel",
        .comment: "kSecAttrComment", .description: "kSecAttrDescription", .generic: "kSecAttrGeneric",
    ]

    var accessGroup: String? { fields[.accessGroup] }

    /// Keys that only a search or an add may hold, never the attributes of an update.
    static let notUpdatable: Set<String> = [
        kSecClass, kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecMatchLimit,
        kSecMatchCaseInsensitive, kSecValuePersistentRef, kSecValueRef, kSecMatchItemList, kSecUseAuthenticationContext,
        kSecUseAuthenticationUI, kSecUseOperationPrompt, kSecUseNoAuthenticationUI, kSecAttrSynchronizableAny,
    ]

    /// Keys Apple defines that Keygate does not implement: errSecUnimplemented, never ignored.
    static let unimplemented: [String: String] = [
        kSecAttrCreator: "kSecAttrCreator", kSecAttrType: "kSecAttrType", kSecAttrIsNegative: "kSecAttrIsNegative",
        kSecMatchCaseInsensitive: "kSecMatchCaseInsensitive", kSecMatchSearchList: "kSecMatchSearchList",
        kSecMatchPolicy: "kSecMatchPolicy", kSecMatchIssuers: "kSecMatchIssuers",
        kSecMatchEmailAddressIfPresent: "kSecMatchEmailAddressIfPresent", kSecMatchSubjectContains: "kSecMatchSubjectContains",
        kSecMatchTrustedOnly: "kSecMatchTrustedOnly", kSecMatchValidOnDate: "kSecMatchValidOnDate",
        kSecUseKeychain: "kSecUseKeychain", kSecUseItemList: "kSecUseItemList", kSecAttrPersistentReference: "kSecAttrPersistentReference",
        kSecAttrSyncViewHint: "kSecAttrSyncViewHint", kSecAttrTokenID: "kSecAttrTokenID",
        kSecUseUserIndependentKeychain: "kSecUseUserIndependentKeychain",
        kSecAttrApplicationTag: "kSecAttrApplicationTag", kSecAttrApplicationLabel: "kSecAttrApplicationLabel",
        kSecAttrKeyClass: "kSecAttrKeyClass", kSecAttrKeySizeInBits: "kSecAttrKeySizeInBits",
        kSecAttrEffectiveKeySize: "kSecAttrEffectiveKeySize", kSecAttrIsPermanent: "kSecAttrIsPermanent",
        kSecMatchSubjectStartsWith: "kSecMatchSubjectStartsWith", kSecMatchSubjectEndsWith: "kSecMatchSubjectEndsWith",
        kSecMatchSubjectWholeString: "kSecMatchSubjectWholeString", kSecMatchDiacriticInsensitive: "kSecMatchDiacriticInsensitive",
        kSecMatchWidthInsensitive: "kSecMatchWidthInsensitive", kSecMatchHostOrSubdomainOfHost: "kSecMatchHostOrSubdomainOfHost",
        kSecAttrIsSensitive: "kSecAttrIsSensitive", kSecAttrIsExtractable: "kSecAttrIsExtractable",
        kSecAttrCanEncrypt: "kSecAttrCanEncrypt", kSecAttrCanDecrypt: "kSecAttrCanDecrypt", kSecAttrCanDerive: "kSecAttrCanDerive",
        kSecAttrCanSign: "kSecAttrCanSign", kSecAttrCanVerify: "kSecAttrCanVerify", kSecAttrCanWrap: "kSecAttrCanWrap",
        kSecAttrCanUnwrap: "kSecAttrCanUnwrap", kSecAttrCertificateType: "kSecAttrCertificateType",
        kSecAttrCertificateEncoding: "kSecAttrCertificateEncoding", kSecAttrSubject: "kSecAttrSubject", kSecAttrIssuer: "kSecAttrIssuer",
        kSecAttrSerialNumber: "kSecAttrSerialNumber", kSecAttrSubjectKeyID: "kSecAttrSubjectKeyID",
        kSecAttrPublicKeyHash: "kSecAttrPublicKeyHash", kSecPrivateKeyAttrs: "kSecPrivateKeyAttrs", kSecPublicKeyAttrs: "kSecPublicKeyAttrs",
    ]

    init(_ dictionary: [String: Any]) throws(SecFailure) {
        declaredGroups = SecAccessGroups.declared(in: environment)
        for (key, raw) in dictionary {
            keys.insert(key)
            try read(key, raw)
        }
        if let group = accessGroup { try SecAccessGroups.check(group, declared: declaredGroups) }
    }

    private mutating func read(_ key: String, _ raw: Any) throws(SecFailure) {
        func text() throws(SecFailure) -> String {
            guard let s = SecValue.string(raw) else { throw .param("\(Self.name(key)) must be a string") }
            return s
        }
        func flag() throws(SecFailure) -> Bool {
            guard let b = SecValue.bool(raw) else { throw .param("\(Self.name(key)) must be a boolean (kCFBooleanTrue, true)") }
            return b
        }
        switch key {
        case kSecClass:
            let code = try text()
            switch code {
            case kSecClassGenericPassword: itemClass = .genericPassword
            case kSecClassInternetPassword: itemClass = .internetPassword
            case kSecClassKey, kSecClassCertificate, kSecClassIdentity:
                throw SecFailure(status: errSecUnimplemented, message: """
                    Keygate stores generic and internet passwords only, not keys, certificates or identities: store the key's bytes as \
                    a generic password
                    """)
            default: throw .param("kSecClass \"\(code)\" is not an item class: use kSecClassGenericPassword or kSecClassInternetPassword")
            }
        case _ where Self.fieldKeys[key] != nil:
            guard let field = Self.fieldKeys[key] else { return }
            switch field.kind {
            case .text, .code, .flag: fields[field] = try text()
            case .port:
                guard let n = SecValue.integer(raw), let p = UInt16(exactly: n) else { throw .param("kSecAttrPort must be a number from 0 to 65535") }
                fields[field] = String(p)
            case .bytes:
                guard let d = SecValue.data(raw) else { throw .param("\(Self.name(key)) must be Data") }
                fields[field] = Base64Text.encode([UInt8](d))
            }
        case kSecValueRef:
            guard let unwrapped = SecValue.unwrapped(raw), let item = unwrapped as? SecKeychainItem else {
                throw SecFailure(status: errSecUnimplemented, message: """
                    kSecValueRef is a SecKeychainItem from kSecReturnRef here: Keygate has no key or certificate refs
                    """)
            }
            try matchItem(item.identity)
        case kSecMatchItemList:
            guard let unwrapped = SecValue.unwrapped(raw), let list = unwrapped as? [Any] else {
                throw .param("kSecMatchItemList must be an array holding one SecKeychainItem")
            }
            let items = list.compactMap { SecValue.unwrapped($0) as? SecKeychainItem }
            guard items.count == list.count else { throw .param("kSecMatchItemList holds something other than SecKeychainItems from kSecReturnRef") }
            guard items.count == 1, let only = items.first else {
                throw SecFailure(status: errSecUnimplemented, message: """
                    kSecMatchItemList with more than one item is not supported: query each item by its kSecValueRef
                    """)
            }
            try matchItem(only.identity)
        case kSecAttrSynchronizable:
            if SecValue.string(raw) == kSecAttrSynchronizableAny { synchronizable = .any } else { synchronizable = try flag() ? .yes : .no }
        case kSecAttrAccessible:
            guard let a = SecValue.accessibility(try text()) else { throw .param("""
                kSecAttrAccessible must be one of the kSecAttrAccessible constants
                """) }
            accessibility = a
        case kSecAttrAccessControl:
            guard let unwrapped = SecValue.unwrapped(raw), let ac = unwrapped as? SecAccessControl else {
                throw .param("kSecAttrAccessControl must be a SecAccessControl from SecAccessControlCreateWithFlags")
            }
            accessControl = ac
        case kSecAttrCreationDate:
            guard let d = SecValue.date(raw) else { throw .param("kSecAttrCreationDate must be a Date") }
            creationDate = d
        case kSecAttrModificationDate:
            guard let d = SecValue.date(raw) else { throw .param("kSecAttrModificationDate must be a Date") }
            modificationDate = d
        case kSecValueData:
            guard let d = SecValue.data(raw) else { throw .param("kSecValueData must be Data") }
            valueData = d
        case kSecValuePersistentRef:
            guard let d = SecValue.data(raw), let reference = SecPersistentRef.reference(from: d) else {
                throw .param("kSecValuePersistentRef is not a persistent reference Keygate returned")
            }
            persistentRef = reference.identity
            persistentRefInAnyGroup = !reference.namesGroup
        case kSecReturnData: returnData = try flag()
        case kSecReturnAttributes: returnAttributes = try flag()
        case kSecReturnPersistentRef: returnPersistentRef = try flag()
        case kSecReturnRef: returnRef = try flag()
        case kSecMatchLimit:
            if let s = SecValue.string(raw) {
                switch s {
                case kSecMatchLimitOne: limit = .one
                case kSecMatchLimitAll: limit = .all
                default: throw .param("kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a number")
                }
            } else if let n = SecValue.integer(raw), n > 0 {
                limit = n == 1 ? .one : .count(n)
            } else {
                throw .param("kSecMatchLimit must be kSecMatchLimitOne, kSecMatchLimitAll or a positive number")
            }
        case kSecUseAuthenticationContext:
            guard let unwrapped = SecValue.unwrapped(raw), let c = unwrapped as? LAContext else {
                throw .param("kSecUseAuthenticationContext must be an LAContext")
            }
            context = c
        case kSecUseAuthenticationUI:
            switch try text() {
            case kSecUseAuthenticationUIAllow: authenticationUI = .allow
            case kSecUseAuthenticationUIFail: authenticationUI = .fail
            case kSecUseAuthenticationUISkip: authenticationUI = .skip
            default: throw .param("kSecUseAuthenticationUI must be kSecUseAuthenticationUIAllow, Fail or Skip")
            }
        case kSecUseNoAuthenticationUI:
            if try flag() { authenticationUI = .fail }
        case kSecUseOperationPrompt: operationPrompt = try text()
        case kSecUseDataProtectionKeychain, kSecAttrIsInvisible:
            _ = try flag()   // accepted: Keygate has one keychain and no item browser to hide items from
        default:
            if let name = Self.unimplemented[key] {
                throw SecFailure(status: errSecUnimplemented, message: """
                    \(name) is not implemented by Keygate: see docs/SECURITY_COMPAT.md for the keys it reads
                    """)
            }
            // Apple's securityd: "attribute %@ not found in class %@" (errSecNoSuchAttr).
            throw SecFailure(status: errSecNoSuchAttr, message: """
                the query key \"\(key)\" is not an attribute Keygate knows: see docs/SECURITY_COMPAT.md for the keys it reads
                """)
        }
    }

    /// kSecValueRef / kSecMatchItemList: the query matches exactly this item.
    private mutating func matchItem(_ identity: ItemIdentity) throws(SecFailure) {
        if let other = persistentRef, other != identity {
            throw .param("the query names two different items (kSecValueRef, kSecValuePersistentRef or kSecMatchItemList)")
        }
        persistentRef = identity
    }

    /// Apple's constant name for a key, for messages.
    static func name(_ key: String) -> String {
        let names: [String: String] = [
            kSecAttrService: "kSecAttrService", kSecAttrAccount: "kSecAttrAccount", kSecAttrLabel: "kSecAttrLabel",
            kSecAttrComment: "kSecAttrComment", kSecAttrDescription: "kSecAttrDescription",
            kSecAttrServer: "kSecAttrServer", kSecAttrPath: "kSecAttrPath", kSecAttrSecurityDomain: "kSecAttrSecurityDomain",
            kSecAttrAccessGroup: "kSecAttrAccessGroup", kSecAttrProtocol: "kSecAttrProtocol",
            kSecAttrAuthenticationType: "kSecAttrAuthenticationType", kSecUseOperationPrompt: "kSecUseOperationPrompt",
            kSecClass: "kSecClass", kSecAttrAccessible: "kSecAttrAccessible", kSecUseAuthenticationUI: "kSecUseAuthenticationUI",
            kSecAttrGeneric: "kSecAttrGeneric",
        ]
        return names[key] ?? key
    }

    // MARK: Keygate's terms

    /// The item class, which Apple requires in every SecItem call.
    func requireClass() throws(SecFailure) -> ItemClass {
        guard let itemClass = itemClass ?? persistentRef?.itemClass else {
            throw .param("the query has no kSecClass: add kSecClass: kSecClassGenericPassword (or kSecClassInternetPassword)")
        }
        return itemClass
    }

    /// Attributes the class does not have are errSecNoSuchAttr, as on Apple: kSecAttrService
    /// belongs to generic passwords; server, protocol, port, path, security domain and
    /// authentication type to internet passwords (ItemField.belongs(to:)).
    func checkAttributes(for cls: ItemClass) throws(SecFailure) {
        let order = ItemField.allCases
        guard let wrong = order.first(where: { fields[$0] != nil && !$0.belongs(to: cls) }) else { return }
        throw SecFailure(status: errSecNoSuchAttr,
                         message: """
                             \(Self.fieldNames[wrong] ?? wrong.rawValue) is not an attribute of \
                             \(cls == .genericPassword ? "kSecClassGenericPassword" : "kSecClassInternetPassword") items: remove it, or use the \
                             other class
                             """)
    }

    /// The fields an ItemQuery matches by (the rest, comment and generic, `matchesExtra` checks).
    private static let queryFields: [ItemField] = ItemField.allCases.filter { $0 != .comment && $0 != .generic && $0 != .synchronizable }

    /// The match for a search, delete or update. A query without kSecAttrSynchronizable finds
    /// only items that are not synchronizable, as on Apple. A query without kSecAttrAccessGroup
    /// leaves the group open; `matchesExtra` keeps the groups the program may use.
    func itemQuery() throws(SecFailure) -> ItemQuery {
        if let identity = persistentRef {
            var q = ItemQuery(exactly: identity)
            if persistentRefInAnyGroup { q.accessGroup = nil }
            return q
        }
        let cls = try requireClass()
        try checkAttributes(for: cls)
        var q = ItemQuery(itemClass: cls)
        for field in Self.queryFields { q[field] = fields[field] }
        switch synchronizable ?? .no {
        case .no: q.synchronizable = false
        case .yes: q.synchronizable = true
        case .any: q.synchronizable = nil
        }
        return q
    }

    /// Whether the query also matches on attributes ItemQuery leaves open (checked here).
    var hasExtraFilters: Bool {
        fields[.comment] != nil || fields[.generic] != nil || accessibility != nil || creationDate != nil
            || modificationDate != nil || (accessGroup == nil && declaredGroups != nil) || (persistentRef != nil && accessGroup != nil)
    }

    func matchesExtra(_ a: ItemAttributes) -> Bool {
        if accessGroup == nil, !SecAccessGroups.visible(a.accessGroup, declared: declaredGroups) { return false }
        if let v = accessGroup, v != (a.accessGroup ?? "") { return false }
        for field in [ItemField.comment, .generic] { if let v = fields[field], v != (a[field] ?? "") { return false } }
        if let v = accessibility, v != a.accessibility { return false }
        if let v = creationDate, UInt64(max(0, v.timeIntervalSince1970)) != a.created { return false }
        if let v = modificationDate, UInt64(max(0, v.timeIntervalSince1970)) != a.modified { return false }
        return true
    }

    /// The class and access control an add stores: kSecAttrAccessControl carries its own
    /// class; giving both it and kSecAttrAccessible is errSecParam, as on Apple.
    func protection() throws(SecFailure) -> (Accessibility, AccessControl?) {
        if let ac = accessControl {
            if accessibility != nil {
                throw .param("""
                    the query has both kSecAttrAccessible and kSecAttrAccessControl: the access control carries its own class, so give \
                    only kSecAttrAccessControl
                    """)
            }
            return (ac.accessibility, ac.accessControl)
        }
        return (accessibility ?? .whenUnlocked, nil)
    }

    /// The attributes of a new item (SecItemAdd): in the access group named, else in the first
    /// group the program declared (Apple's default group), else in none.
    func newItem() throws(SecFailure) -> ItemAttributes {
        let cls = try requireClass()
        try checkAttributes(for: cls)
        if persistentRef != nil {
            throw .param("kSecValueRef, kSecValuePersistentRef and kSecMatchItemList find items; an add describes a new one with kSecAttr* keys")
        }
        if synchronizable == .any {
            throw .param("kSecAttrSynchronizableAny is for searches: add with kSecAttrSynchronizable true or false")
        }
        guard let identity = ItemIdentity(itemClass: cls, text: { fields[$0] }) else {
            throw .param("kSecAttrPort must be a number from 0 to 65535")
        }
        let (accessibility, accessControl) = try protection()
        var item = ItemAttributes(identity: identity, accessibility: accessibility, accessControl: accessControl,
                                  accessGroup: accessGroup ?? declaredGroups?.first, synchronizable: synchronizable == .yes)
        for field in [ItemField.label, .comment, .description, .generic] { item[field] = fields[field] }
        return item
    }

    /// The changes an update applies (SecItemUpdate's attributesToUpdate).
    func changes() throws(SecFailure) -> ItemChanges {
        if let bad = keys.first(where: { Self.notUpdatable.contains($0) }) {
            throw .param("""
                \(Self.name(bad)) cannot be updated: the attributes to update hold item attributes and kSecValueData only; put \
                search keys in the query
                """)
        }
        if synchronizable == .any {
            throw .param("kSecAttrSynchronizableAny is for searches: update kSecAttrSynchronizable to true or false")
        }
        var c = ItemChanges()
        for (field, value) in fields { c[field] = value }
        c.synchronizable = synchronizable.map { $0 == .yes }
        if accessControl != nil || accessibility != nil {
            let (a, ac) = try protection()
            c.accessibility = a
            c.accessControl = ac
        }
        return c
    }
}
