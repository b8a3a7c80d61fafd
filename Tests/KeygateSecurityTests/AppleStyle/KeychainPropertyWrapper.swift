// Apple-style code: a property wrapper, `@Keychain(key: "token") var token: String?`, as
// many apps write one, storing through SecItemAdd / SecItemUpdate / SecItemDelete with an
// optional access group. Written for Apple's SDK, imports included.
import Foundation
import Security

@propertyWrapper
struct Keychain {
    let key: String
    let service: String
    let accessGroup: String?

    init(key: String, service: String = "com.example.propertywrapper", accessGroup: String? = nil) {
        self.key = key
        self.service = service
        self.accessGroup = accessGroup
    }

    private var query: [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword,
                                kSecAttrService as String: service,
                                kSecAttrAccount as String: key]
        if let group = accessGroup { q[kSecAttrAccessGroup as String] = group }
        return q
    }

    var wrappedValue: String? {
        get {
            var q = query
            q[kSecReturnData as String] = true
            var result: AnyObject?
            guard SecItemCopyMatching(q as CFDictionary, &result) == errSecSuccess, let data = result as? Data else { return nil }
            return String(data: data, encoding: .utf8)
        }
        nonmutating set {
            guard let value = newValue else {
                _ = SecItemDelete(query as CFDictionary)
                return
            }
            let data = Data(value.utf8)
            let status = SecItemUpdate(query as CFDictionary, [kSecValueData as String: data] as CFDictionary)
            if status == errSecItemNotFound {
                var add = query
                add[kSecValueData as String] = data
                add[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
                _ = SecItemAdd(add as CFDictionary, nil)
            }
        }
    }

    /// `$token`: the wrapper itself, for the status-returning calls.
    var projectedValue: Keychain { self }

    var exists: Bool { SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess }
}
