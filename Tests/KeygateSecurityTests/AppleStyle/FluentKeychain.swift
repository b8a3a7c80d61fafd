// Apple-style code in the shape of KeychainAccess: an immutable, fluent configuration
// (`FluentKeychain(service:).accessibility(...).synchronizable(true)`), a subscript for
// strings, a typed error carrying the OSStatus, errors turned into NSError through the
// CFError accessors, and listings through kSecMatchLimitAll + kSecReturnAttributes +
// kSecReturnRef. Written for Apple's SDK, imports included.
import Foundation
import LocalAuthentication
import Security

enum FluentKeychainError: Error, Equatable {
    case status(OSStatus, String)
    case accessControl(domain: String, code: Int, description: String)
    case unexpectedResult

    var status: OSStatus? {
        if case .status(let s, _) = self { return s }
        return nil
    }

    /// KeychainAccess's habit: an NSError in NSOSStatusErrorDomain with Apple's message.
    var nsError: NSError {
        switch self {
        case .status(let s, let message):
            return NSError(domain: NSOSStatusErrorDomain, code: Int(s), userInfo: [NSLocalizedDescriptionKey: message])
        case .accessControl(let domain, let code, let description):
            return NSError(domain: domain, code: code, userInfo: [NSLocalizedDescriptionKey: description])
        case .unexpectedResult:
            return NSError(domain: "FluentKeychain", code: -1)
        }
    }

    static func from(_ status: OSStatus) -> FluentKeychainError {
        .status(status, (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)")
    }
}

struct FluentItem {
    let key: String
    let label: String?
    let comment: String?
    let synchronizable: Bool
    let accessGroup: String?
    let accessible: String?
    let ref: SecKeychainItem
}

struct FluentKeychain {
    enum AuthenticationUI { case allow, fail, skip }

    let service: String
    private(set) var accessibleValue: CFString = kSecAttrAccessibleAfterFirstUnlock
    private(set) var accessFlags: SecAccessControlCreateFlags?
    private(set) var group: String?
    private(set) var sync = false
    private(set) var syncAny = false
    private(set) var labelValue: String?
    private(set) var commentValue: String?
    private(set) var context: LAContext?
    private(set) var ui: AuthenticationUI = .allow

    init(service: String) { self.service = service }

    func accessibility(_ accessible: CFString, authenticationPolicy: SecAccessControlCreateFlags? = nil) -> FluentKeychain {
        var k = self
        k.accessibleValue = accessible
        k.accessFlags = authenticationPolicy
        return k
    }

    func accessGroup(_ group: String?) -> FluentKeychain { var k = self; k.group = group; return k }
    func synchronizable(_ value: Bool) -> FluentKeychain { var k = self; k.sync = value; k.syncAny = false; return k }
    func synchronizableAny() -> FluentKeychain { var k = self; k.syncAny = true; return k }
    func label(_ label: String) -> FluentKeychain { var k = self; k.labelValue = label; return k }
    func comment(_ comment: String) -> FluentKeychain { var k = self; k.commentValue = comment; return k }
    func authenticationContext(_ context: LAContext) -> FluentKeychain { var k = self; k.context = context; return k }
    func authenticationUI(_ ui: AuthenticationUI) -> FluentKeychain { var k = self; k.ui = ui; return k }

    private func query(_ key: String? = nil) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        if let key = key { q[kSecAttrAccount as String] = key }
        if let group = group { q[kSecAttrAccessGroup as String] = group }
        q[kSecAttrSynchronizable as String] = syncAny ? kSecAttrSynchronizableAny as Any : (sync ? kCFBooleanTrue : kCFBooleanFalse) as Any
        if let context = context { q[kSecUseAuthenticationContext as String] = context }
        switch ui {
        case .allow: break
        case .fail: q[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        case .skip: q[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
        }
        return q
    }

    /// KeychainAccess builds the access control here and turns its CFError into an NSError.
    private func protection() throws -> [String: Any] {
        guard let flags = accessFlags else { return [kSecAttrAccessible as String: accessibleValue] }
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, accessibleValue, flags, &error) else {
            if let e = error?.takeRetainedValue() {
                throw FluentKeychainError.accessControl(domain: CFErrorGetDomain(e) as String, code: CFErrorGetCode(e),
                                                        description: CFErrorCopyDescription(e) as String)
            }
            throw FluentKeychainError.unexpectedResult
        }
        return [kSecAttrAccessControl as String: access]
    }

    func set(_ value: String, key: String) throws {
        try set(Data(value.utf8), key: key)
    }

    func set(_ value: Data, key: String) throws {
        var lookup = query(key)
        lookup[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        let exists = SecItemCopyMatching(lookup as CFDictionary, nil)
        switch exists {
        case errSecSuccess, errSecInteractionNotAllowed:
            var update: [String: Any] = [kSecValueData as String: value]
            if let label = labelValue { update[kSecAttrLabel as String] = label }
            if let comment = commentValue { update[kSecAttrComment as String] = comment }
            let status = SecItemUpdate(query(key) as CFDictionary, update as CFDictionary)
            guard status == errSecSuccess else { throw FluentKeychainError.from(status) }
        case errSecItemNotFound:
            var add = query(key).merging(try protection()) { $1 }
            add[kSecValueData as String] = value
            if let label = labelValue { add[kSecAttrLabel as String] = label }
            if let comment = commentValue { add[kSecAttrComment as String] = comment }
            let status = SecItemAdd(add as CFDictionary, nil)
            guard status == errSecSuccess else { throw FluentKeychainError.from(status) }
        default:
            throw FluentKeychainError.from(exists)
        }
    }

    func getData(_ key: String) throws -> Data? {
        var q = query(key)
        q[kSecReturnData as String] = kCFBooleanTrue
        q[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw FluentKeychainError.unexpectedResult }
            return data
        case errSecItemNotFound: return nil
        default: throw FluentKeychainError.from(status)
        }
    }

    func get(_ key: String) throws -> String? {
        try getData(key).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Only the attributes change; the secret is kept (SecItemUpdate without kSecValueData).
    func update(key: String, label: String? = nil, comment: String? = nil) throws {
        var update: [String: Any] = [:]
        if let label = label { update[kSecAttrLabel as String] = label }
        if let comment = comment { update[kSecAttrComment as String] = comment }
        let status = SecItemUpdate(query(key) as CFDictionary, update as CFDictionary)
        guard status == errSecSuccess else { throw FluentKeychainError.from(status) }
    }

    func remove(_ key: String) throws {
        let status = SecItemDelete(query(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw FluentKeychainError.from(status) }
    }

    func removeAll() throws {
        let status = SecItemDelete(query() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw FluentKeychainError.from(status) }
    }

    func contains(_ key: String) throws -> Bool {
        let status = SecItemCopyMatching(query(key) as CFDictionary, nil)
        switch status {
        case errSecSuccess: return true
        case errSecItemNotFound: return false
        default: throw FluentKeychainError.from(status)
        }
    }

    /// KeychainAccess's allItems(): attributes and a ref for every item of the service.
    func allItems() throws -> [FluentItem] {
        var q = query()
        q[kSecMatchLimit as String] = kSecMatchLimitAll
        q[kSecReturnAttributes as String] = kCFBooleanTrue
        q[kSecReturnRef as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess else { throw FluentKeychainError.from(status) }
        guard let items = result as? [[String: Any]] else { throw FluentKeychainError.unexpectedResult }
        return try items.map { item in
            guard let key = item[kSecAttrAccount as String] as? String,
                  let ref = item[kSecValueRef as String] as? SecKeychainItem else { throw FluentKeychainError.unexpectedResult }
            return FluentItem(key: key, label: item[kSecAttrLabel as String] as? String,
                              comment: item[kSecAttrComment as String] as? String,
                              synchronizable: (item[kSecAttrSynchronizable as String] as? NSNumber)?.boolValue ?? false,
                              accessGroup: item[kSecAttrAccessGroup as String] as? String,
                              accessible: item[kSecAttrAccessible as String] as? String, ref: ref)
        }.sorted { $0.key < $1.key }
    }

    func allKeys() throws -> [String] { try allItems().map { $0.key } }

    subscript(key: String) -> String? {
        get { return (try? get(key)) ?? nil }
        nonmutating set {
            if let value = newValue { try? set(value, key: key) } else { try? remove(key) }
        }
    }

    subscript(data key: String) -> Data? {
        get { return (try? getData(key)) ?? nil }
        nonmutating set {
            if let value = newValue { try? set(value, key: key) } else { try? remove(key) }
        }
    }
}
