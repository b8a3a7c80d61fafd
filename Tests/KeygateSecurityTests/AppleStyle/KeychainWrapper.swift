// Apple-style code, written as iOS and macOS apps write it: a class wrapper with a shared
// instance, upsert through errSecDuplicateItem + SecItemUpdate, exists through
// SecItemCopyMatching(query, nil), deleteAll by service. The Apple original, imports included.
import Foundation
import Security

final class KeychainWrapper {
    static let shared = KeychainWrapper()

    var service: String = Bundle.main.bundleIdentifier ?? "com.example.app"
    private(set) var lastStatus: OSStatus = noErr

    private func baseQuery(for key: String) -> [String: Any] {
        return [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: key,
        ]
    }

    @discardableResult
    func set(_ value: String, forKey key: String) -> Bool {
        guard let data = value.data(using: .utf8) else { return false }
        return set(data, forKey: key)
    }

    @discardableResult
    func set(_ data: Data, forKey key: String) -> Bool {
        var query = baseQuery(for: key)
        query[kSecValueData as String] = data
        query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        var status = SecItemAdd(query as CFDictionary, nil)
        if status == errSecDuplicateItem {
            let attributes: [String: Any] = [kSecValueData as String: data]
            status = SecItemUpdate(baseQuery(for: key) as CFDictionary, attributes as CFDictionary)
        }
        lastStatus = status
        return status == errSecSuccess
    }

    func data(forKey key: String) -> Data? {
        var query = baseQuery(for: key)
        query[kSecReturnData as String] = kCFBooleanTrue
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        lastStatus = status
        guard status == errSecSuccess else { return nil }
        return result as? Data
    }

    func string(forKey key: String) -> String? {
        guard let data = data(forKey: key) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    func exists(_ key: String) -> Bool {
        let status = SecItemCopyMatching(baseQuery(for: key) as CFDictionary, nil)
        lastStatus = status
        return status == errSecSuccess
    }

    @discardableResult
    func delete(_ key: String) -> Bool {
        let status = SecItemDelete(baseQuery(for: key) as CFDictionary)
        lastStatus = status
        return status == errSecSuccess || status == errSecItemNotFound
    }

    func allKeys() -> [String] {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecReturnAttributes as String: true,
            kSecMatchLimit as String: kSecMatchLimitAll,
        ]
        var result: AnyObject?
        lastStatus = SecItemCopyMatching(query as CFDictionary, &result)
        guard lastStatus == errSecSuccess, let items = result as? [[String: Any]] else { return [] }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
    }

    @discardableResult
    func deleteAll() -> Bool {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
        ]
        let status = SecItemDelete(query as CFDictionary)
        lastStatus = status
        return status == errSecSuccess || status == errSecItemNotFound
    }
}
