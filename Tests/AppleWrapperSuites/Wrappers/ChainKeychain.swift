// A fluent keychain in KeychainAccess's shape: an immutable configuration built by chained
// calls (`ChainKeychain(service:).synchronizable(true).accessibility(...)`), a String
// subscript, an upsert that asks whether the item exists before it updates or adds, and
// listings through kSecMatchLimitAll. Written for Apple's SDK, imports included.
import Foundation
import LocalAuthentication
import Security

enum ChainKeychainError: Error, Equatable {
    case status(OSStatus)
    case accessControl
    case unexpectedResult
}

struct ChainKeychain {
    let service: String
    private var accessible: CFString = kSecAttrAccessibleAfterFirstUnlock
    private var policy: SecAccessControlCreateFlags?
    private var sync: Bool?
    private var syncAny = false
    private var prompt: String?
    private var context: LAContext?

    init(service: String) { self.service = service }

    func accessibility(_ accessible: CFString, authenticationPolicy: SecAccessControlCreateFlags? = nil) -> ChainKeychain {
        var copy = self
        copy.accessible = accessible
        copy.policy = authenticationPolicy
        return copy
    }

    func synchronizable(_ sync: Bool) -> ChainKeychain {
        var copy = self
        copy.sync = sync
        copy.syncAny = false
        return copy
    }

    /// Both synchronizable and local items (kSecAttrSynchronizableAny), for reads and removals.
    func synchronizableAny() -> ChainKeychain {
        var copy = self
        copy.syncAny = true
        return copy
    }

    func authenticationPrompt(_ prompt: String) -> ChainKeychain {
        var copy = self
        copy.prompt = prompt
        return copy
    }

    func authenticationContext(_ context: LAContext) -> ChainKeychain {
        var copy = self
        copy.context = context
        return copy
    }

    private func query(_ key: String? = nil) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        if let key = key { query[kSecAttrAccount as String] = key }
        if syncAny {
            query[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        } else if let sync = sync {
            query[kSecAttrSynchronizable as String] = sync ? kCFBooleanTrue : kCFBooleanFalse
        }
        if let prompt = prompt { query[kSecUseOperationPrompt as String] = prompt }
        if let context = context { query[kSecUseAuthenticationContext as String] = context }
        return query
    }

    subscript(key: String) -> String? {
        get { return (try? get(key)) ?? nil }
        nonmutating set {
            if let value = newValue { try? set(value, key: key) } else { try? remove(key) }
        }
    }

    func get(_ key: String) throws -> String? {
        guard let data = try getData(key) else { return nil }
        guard let string = String(data: data, encoding: .utf8) else { throw ChainKeychainError.unexpectedResult }
        return string
    }

    func getData(_ key: String) throws -> Data? {
        var query = self.query(key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        switch status {
        case errSecSuccess:
            guard let data = result as? Data else { throw ChainKeychainError.unexpectedResult }
            return data
        case errSecItemNotFound:
            return nil
        default:
            throw ChainKeychainError.status(status)
        }
    }

    func set(_ value: String, key: String) throws {
        try set(Data(value.utf8), key: key)
    }

    func set(_ data: Data, key: String) throws {
        var searchQuery = query(key)
        searchQuery.removeValue(forKey: kSecUseOperationPrompt as String)
        let status = SecItemCopyMatching(searchQuery as CFDictionary, nil)
        switch status {
        case errSecSuccess:
            let update = SecItemUpdate(searchQuery as CFDictionary, [kSecValueData as String: data] as CFDictionary)
            guard update == errSecSuccess else { throw ChainKeychainError.status(update) }
        case errSecItemNotFound:
            var add = query(key)
            add.removeValue(forKey: kSecUseOperationPrompt as String)
            add[kSecValueData as String] = data
            if let policy = policy {
                var error: Unmanaged<CFError>?
                guard let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, accessible, policy, &error) else {
                    throw ChainKeychainError.accessControl
                }
                add[kSecAttrAccessControl as String] = access
            } else {
                add[kSecAttrAccessible as String] = accessible
            }
            let added = SecItemAdd(add as CFDictionary, nil)
            guard added == errSecSuccess else { throw ChainKeychainError.status(added) }
        default:
            throw ChainKeychainError.status(status)
        }
    }

    func remove(_ key: String) throws {
        let status = SecItemDelete(query(key) as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw ChainKeychainError.status(status) }
    }

    func removeAll() throws {
        let status = SecItemDelete(query() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw ChainKeychainError.status(status) }
    }

    /// The item's attributes, as kSecReturnAttributes gives them.
    func attributes(_ key: String) throws -> [String: Any]? {
        var query = self.query(key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess else { throw ChainKeychainError.status(status) }
        return result as? [String: Any]
    }

    /// Every key, in the order the keychain returns them.
    func allKeys() throws -> [String] {
        var query = self.query()
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { throw ChainKeychainError.status(status) }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }
    }
}
