// Translates an Apple query dictionary (kSec* keys, loosely typed values) into Keygate's
// terms: the item class and attributes, an ItemQuery to match with, the changes of an
// update, what to return, how many, and how to authenticate. Unknown keys and values of
// the wrong type are errSecParam, as on Apple, never silently ignored. Delegates the
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
    var service: String?
    var account: String?
    var label: String?
    var comment: String?
    var description: String?
    var generic: Data?
    var server: String?
    var `protocol`: InternetProtocol?
    var port: UInt16?
    var path: String?
    var securityDomain: String?
    var authenticationType: AuthenticationType?
    var accessGroup: String?
    var synchronizable: Synchronizable?
    var accessibility: Accessibility?
    var accessControl: SecAccessControl?
    var creationDate: Date?
    var modificationDate: Date?

    var valueData: Data?
    var persistentRef: ItemIdentity?
    var returnData = false
    var returnAttributes = false
    var returnPersistentRef = false
    var limit: Limit?
    var context: LAContext?
    var authenticationUI = AuthenticationUI.allow
    var operationPrompt: String?
    /// Every key the dictionary held.
    private(set) var keys: Set<String> = []

    /// Keys that only a search or an add may hold, never the attributes of an update.
    static let notUpdatable: Set<String> = [
        kSecClass, kSecReturnData, kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecMatchLimit,
        kSecMatchCaseInsensitive, kSecValuePersistentRef, kSecValueRef, kSecUseAuthenticationContext,
        kSecUseAuthenticationUI, kSecUseOperationPrompt, kSecUseNoAuthenticationUI, kSecAttrSynchronizableAny,
    ]

    init(_ dictionary: [String: Any]) throws(SecFailure) {
        for (key, raw) in dictionary {
            keys.insert(key)
            try read(key, raw)
        }
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
                throw SecFailure(status: errSecUnimplemented, message: "Keygate stores generic and internet passwords only, not keys, certificates or identities: store the key's bytes as a generic password")
            default: throw .param("kSecClass \"\(code)\" is not an item class: use kSecClassGenericPassword or kSecClassInternetPassword")
            }
        case kSecAttrService: service = try text()
        case kSecAttrAccount: account = try text()
        case kSecAttrLabel: label = try text()
        case kSecAttrComment: comment = try text()
        case kSecAttrDescription: description = try text()
        case kSecAttrServer: server = try text()
        case kSecAttrPath: path = try text()
        case kSecAttrSecurityDomain: securityDomain = try text()
        case kSecAttrAccessGroup: accessGroup = try text()
        case kSecAttrGeneric:
            guard let d = SecValue.data(raw) else { throw .param("kSecAttrGeneric must be Data") }
            generic = d
        case kSecAttrProtocol: self.protocol = InternetProtocol(rawValue: try text())
        case kSecAttrAuthenticationType: authenticationType = AuthenticationType(rawValue: try text())
        case kSecAttrPort:
            guard let n = SecValue.integer(raw), let p = UInt16(exactly: n) else { throw .param("kSecAttrPort must be a number from 0 to 65535") }
            port = p
        case kSecAttrSynchronizable:
            if SecValue.string(raw) == kSecAttrSynchronizableAny { synchronizable = .any } else { synchronizable = try flag() ? .yes : .no }
        case kSecAttrAccessible:
            guard let a = SecValue.accessibility(try text()) else { throw .param("kSecAttrAccessible must be one of the kSecAttrAccessible constants") }
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
            guard let d = SecValue.data(raw), let identity = SecPersistentRef.identity(from: d) else {
                throw .param("kSecValuePersistentRef is not a persistent reference Keygate returned")
            }
            persistentRef = identity
        case kSecReturnData: returnData = try flag()
        case kSecReturnAttributes: returnAttributes = try flag()
        case kSecReturnPersistentRef: returnPersistentRef = try flag()
        case kSecReturnRef:
            if try flag() {
                throw .param("kSecReturnRef has no meaning for passwords: ask for kSecReturnData, kSecReturnAttributes or kSecReturnPersistentRef")
            }
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
            throw .param("the query key \"\(key)\" is not supported by Keygate: see docs/SECURITY_COMPAT.md for the keys it reads")
        }
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

    /// The match for a search, delete or update. A query without kSecAttrSynchronizable finds
    /// only items that are not synchronizable, as on Apple.
    func itemQuery() throws(SecFailure) -> ItemQuery {
        if let identity = persistentRef { return ItemQuery(exactly: identity) }
        let cls = try requireClass()
        var q = ItemQuery(itemClass: cls, service: cls == .genericPassword ? service : nil, account: account,
                          label: label, description: description, accessGroup: accessGroup)
        if cls == .internetPassword {
            q.server = server
            q.protocol = self.protocol
            q.port = port
            q.path = path
            q.securityDomain = securityDomain
            q.authenticationType = authenticationType
        }
        switch synchronizable ?? .no {
        case .no: q.synchronizable = false
        case .yes: q.synchronizable = true
        case .any: q.synchronizable = nil
        }
        return q
    }

    /// Whether the query also matches on attributes ItemQuery leaves open (checked here).
    var hasExtraFilters: Bool {
        comment != nil || generic != nil || accessibility != nil || creationDate != nil || modificationDate != nil
    }

    func matchesExtra(_ a: ItemAttributes) -> Bool {
        if let v = comment, v != (a.comment ?? "") { return false }
        if let v = generic, [UInt8](v) != (a.generic ?? []) { return false }
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
                throw .param("the query has both kSecAttrAccessible and kSecAttrAccessControl: the access control carries its own class, so give only kSecAttrAccessControl")
            }
            return (ac.accessibility, ac.accessControl)
        }
        return (accessibility ?? .whenUnlocked, nil)
    }

    /// The attributes of a new item (SecItemAdd).
    func newItem() throws(SecFailure) -> ItemAttributes {
        let cls = try requireClass()
        let identity: ItemIdentity
        switch cls {
        case .genericPassword:
            identity = .generic(service: service ?? "", account: account ?? "")
        case .internetPassword:
            identity = .internet(server: server ?? "", account: account ?? "", protocol: self.protocol, port: port ?? 0,
                                 path: path ?? "", securityDomain: securityDomain ?? "",
                                 authenticationType: authenticationType)
        }
        if synchronizable == .any {
            throw .param("kSecAttrSynchronizableAny is for searches: add with kSecAttrSynchronizable true or false")
        }
        let (accessibility, accessControl) = try protection()
        return ItemAttributes(identity: identity, label: label, comment: comment, generic: generic.map { [UInt8]($0) },
                              accessibility: accessibility, accessControl: accessControl, description: description,
                              accessGroup: accessGroup, synchronizable: synchronizable == .yes)
    }

    /// The changes an update applies (SecItemUpdate's attributesToUpdate).
    func changes() throws(SecFailure) -> ItemChanges {
        if let bad = keys.first(where: { Self.notUpdatable.contains($0) }) {
            throw .param("\(Self.name(bad)) cannot be updated: the attributes to update hold item attributes and kSecValueData only; put search keys in the query")
        }
        if synchronizable == .any {
            throw .param("kSecAttrSynchronizableAny is for searches: update kSecAttrSynchronizable to true or false")
        }
        var c = ItemChanges()
        c.service = service
        c.account = account
        c.server = server
        c.protocol = self.protocol
        c.port = port
        c.path = path
        c.securityDomain = securityDomain
        c.authenticationType = authenticationType
        c.label = label
        c.comment = comment
        c.description = description
        c.generic = generic.map { [UInt8]($0) }
        c.accessGroup = accessGroup
        c.synchronizable = synchronizable.map { $0 == .yes }
        if accessControl != nil || accessibility != nil {
            let (a, ac) = try protection()
            c.accessibility = a
            c.accessControl = ac
        }
        return c
    }
}
