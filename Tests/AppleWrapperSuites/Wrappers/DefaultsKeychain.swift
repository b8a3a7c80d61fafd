// A keychain with UserDefaults' API, in SwiftKeychainWrapper's shape: a `standard` instance
// named after the app's bundle identifier, typed setters and getters, the key kept both as
// the account and (encoded) as kSecAttrGeneric, and accessibility per key. Written for
// Apple's SDK, imports included: this file imports only Foundation, as the original does.
import Foundation

class DefaultsKeychain {
    /// Named after the bundle, as SwiftKeychainWrapper does. Linux Foundation has no bundle
    /// identifier for a command-line program (Bundle.main.bundleIdentifier is nil), so the
    /// fallback name is what a port gets (docs/SECURITY_COMPAT.md).
    static let standard = DefaultsKeychain()

    let serviceName: String
    let accessGroup: String?

    init(serviceName: String = Bundle.main.bundleIdentifier ?? "DefaultsKeychain", accessGroup: String? = nil) {
        self.serviceName = serviceName
        self.accessGroup = accessGroup
    }

    private func query(forKey key: String?) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: serviceName]
        if let key = key {
            query[kSecAttrAccount as String] = key
            query[kSecAttrGeneric as String] = key.data(using: .utf8)
        }
        if let group = accessGroup { query[kSecAttrAccessGroup as String] = group }
        return query
    }

    // MARK: Setters

    @discardableResult
    func set(_ value: String, forKey key: String, withAccessibility accessibility: CFString? = nil) -> Bool {
        return set(Data(value.utf8), forKey: key, withAccessibility: accessibility)
    }

    @discardableResult
    func set(_ value: Int, forKey key: String, withAccessibility accessibility: CFString? = nil) -> Bool {
        return set(String(value), forKey: key, withAccessibility: accessibility)
    }

    @discardableResult
    func set(_ value: Double, forKey key: String, withAccessibility accessibility: CFString? = nil) -> Bool {
        return set(String(value), forKey: key, withAccessibility: accessibility)
    }

    @discardableResult
    func set(_ value: Bool, forKey key: String, withAccessibility accessibility: CFString? = nil) -> Bool {
        return set(value ? "1" : "0", forKey: key, withAccessibility: accessibility)
    }

    @discardableResult
    func set(_ value: Data, forKey key: String, withAccessibility accessibility: CFString? = nil) -> Bool {
        var add = query(forKey: key)
        add[kSecValueData as String] = value
        add[kSecAttrAccessible as String] = accessibility ?? kSecAttrAccessibleWhenUnlocked
        let status = SecItemAdd(add as CFDictionary, nil)
        if status == errSecDuplicateItem {
            var changes: [String: Any] = [kSecValueData as String: value]
            if let accessibility = accessibility { changes[kSecAttrAccessible as String] = accessibility }
            return SecItemUpdate(query(forKey: key) as CFDictionary, changes as CFDictionary) == errSecSuccess
        }
        return status == errSecSuccess
    }

    // MARK: Getters

    func data(forKey key: String) -> Data? {
        var query = self.query(forKey: key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnData as String] = kCFBooleanTrue
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return status == noErr ? result as? Data : nil
    }

    func string(forKey key: String) -> String? {
        return data(forKey: key).flatMap { String(data: $0, encoding: .utf8) }
    }

    func integer(forKey key: String) -> Int? { return string(forKey: key).flatMap { Int($0) } }

    func double(forKey key: String) -> Double? { return string(forKey: key).flatMap { Double($0) } }

    func bool(forKey key: String) -> Bool? { return string(forKey: key).map { $0 == "1" } }

    func hasValue(forKey key: String) -> Bool {
        return SecItemCopyMatching(query(forKey: key) as CFDictionary, nil) == noErr
    }

    func accessibilityOfKey(_ key: String) -> CFString? {
        var query = self.query(forKey: key)
        query[kSecMatchLimit as String] = kSecMatchLimitOne
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == noErr,
              let attributes = result as? [String: Any] else { return nil }
        return attributes[kSecAttrAccessible as String] as? String
    }

    func allKeys() -> Set<String> {
        var query = self.query(forKey: nil)
        query[kSecMatchLimit as String] = kSecMatchLimitAll
        query[kSecReturnAttributes as String] = kCFBooleanTrue
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == noErr, let items = result as? [[String: Any]] else { return [] }
        return Set(items.compactMap { ($0[kSecAttrGeneric as String] as? Data).flatMap { String(data: $0, encoding: .utf8) } })
    }

    // MARK: Removal

    @discardableResult
    func removeObject(forKey key: String) -> Bool {
        return SecItemDelete(query(forKey: key) as CFDictionary) == errSecSuccess
    }

    @discardableResult
    func removeAllKeys() -> Bool {
        let status = SecItemDelete(query(forKey: nil) as CFDictionary)
        return status == errSecSuccess || status == errSecItemNotFound
    }
}
