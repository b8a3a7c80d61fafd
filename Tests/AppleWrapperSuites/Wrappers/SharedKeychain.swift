// A keychain shared between apps, in Valet's shape: an identifier, an access group, and a
// flavor (local, or iCloud, which is a synchronizable item), with set/get/contains, all keys,
// removal of one flavor's items, and migration of every item from another keychain.
// Written for Apple's SDK, imports included.
import Foundation
import Security

final class SharedKeychain {
    enum Flavor { case local, iCloud }

    let identifier: String
    let accessGroup: String?
    let flavor: Flavor

    init(identifier: String, accessGroup: String? = nil, flavor: Flavor = .local) {
        self.identifier = identifier
        self.accessGroup = accessGroup
        self.flavor = flavor
    }

    private func query(_ key: String? = nil) -> [String: AnyObject] {
        var query: [String: AnyObject] = [
            kSecClass as String: kSecClassGenericPassword as AnyObject,
            kSecAttrService as String: identifier as AnyObject,
        ]
        if let key = key { query[kSecAttrAccount as String] = key as AnyObject }
        if let group = accessGroup { query[kSecAttrAccessGroup as String] = group as AnyObject }
        if flavor == .iCloud { query[kSecAttrSynchronizable as String] = kCFBooleanTrue }
        return query
    }

    @discardableResult
    func set(string: String, forKey key: String) -> OSStatus {
        let data = Data(string.utf8)
        if containsObject(forKey: key) {
            return SecItemUpdate(query(key) as CFDictionary, [kSecValueData as String: data] as CFDictionary)
        }
        var add = query(key)
        add[kSecValueData as String] = data as AnyObject
        add[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock as AnyObject
        return SecItemAdd(add as CFDictionary, nil)
    }

    func string(forKey key: String) -> String? {
        var query = self.query(key)
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess, let data = result as? Data else { return nil }
        return String(data: data, encoding: .utf8)
    }

    func containsObject(forKey key: String) -> Bool {
        return SecItemCopyMatching(query(key) as CFDictionary, nil) == errSecSuccess
    }

    func allKeys() -> [String] {
        var query = self.query()
        query[kSecMatchLimit as String] = kSecMatchLimitAll as AnyObject
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess,
              let items = result as? [[String: Any]] else { return [] }
        return items.compactMap { $0[kSecAttrAccount as String] as? String }
    }

    @discardableResult
    func removeObject(forKey key: String) -> OSStatus {
        return SecItemDelete(query(key) as CFDictionary)
    }

    @discardableResult
    func removeAllObjects() -> OSStatus {
        let status = SecItemDelete(query() as CFDictionary)
        return status == errSecItemNotFound ? errSecSuccess : status
    }

    /// Copies every item of `other` into this keychain, then removes them from `other`.
    func migrateObjects(from other: SharedKeychain) -> OSStatus {
        var query = other.query()
        query[kSecMatchLimit as String] = kSecMatchLimitAll as AnyObject
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return errSecSuccess }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { return status }
        for item in items {
            guard let key = item[kSecAttrAccount as String] as? String, let data = item[kSecValueData as String] as? Data else {
                return errSecDecode
            }
            let added = set(string: String(decoding: data, as: UTF8.self), forKey: key)
            guard added == errSecSuccess else { return added }
        }
        return other.removeAllObjects()
    }
}
