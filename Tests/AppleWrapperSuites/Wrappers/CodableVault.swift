// A keychain for Codable values: each value is JSON-encoded into one generic password,
// saved by add-then-update on errSecDuplicateItem, and listed in the order it was first
// saved. Written for Apple's SDK, imports included.
import Foundation
import Security

struct CodableVault {
    let service: String
    var accessibility: CFString = kSecAttrAccessibleAfterFirstUnlock

    init(service: String) { self.service = service }

    private func baseQuery(_ key: String? = nil) -> [CFString: Any] {
        var query: [CFString: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: service]
        if let key = key { query[kSecAttrAccount] = key }
        return query
    }

    func save<T: Encodable>(_ value: T, for key: String) throws {
        let data = try JSONEncoder().encode(value)
        try saveData(data, for: key)
    }

    /// Raw bytes under the key, for values a caller encodes itself.
    func saveData(_ data: Data, for key: String) throws {
        var add = baseQuery(key)
        add[kSecValueData] = data
        add[kSecAttrAccessible] = accessibility
        var status = SecItemAdd(add as CFDictionary, nil)
        if status == errSecDuplicateItem {
            status = SecItemUpdate(baseQuery(key) as CFDictionary, [kSecValueData: data] as CFDictionary)
        }
        guard status == errSecSuccess else { throw VaultError(status: status) }
    }

    func load<T: Decodable>(_ type: T.Type, for key: String) throws -> T {
        var query = baseQuery(key)
        query[kSecReturnData] = true
        query[kSecMatchLimit] = kSecMatchLimitOne
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { throw VaultError(status: status) }
        guard let data = result as? Data else { throw VaultError.decodingFailed }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw VaultError.decodingFailed
        }
    }

    func contains(_ key: String) -> Bool {
        return SecItemCopyMatching(baseQuery(key) as CFDictionary, nil) == errSecSuccess
    }

    func delete(_ key: String) throws {
        let status = SecItemDelete(baseQuery(key) as CFDictionary)
        guard status == errSecSuccess else { throw VaultError(status: status) }
    }

    func deleteAll() throws {
        let status = SecItemDelete(baseQuery() as CFDictionary)
        guard status == errSecSuccess || status == errSecItemNotFound else { throw VaultError(status: status) }
    }

    func keys() throws -> [String] {
        var query = baseQuery()
        query[kSecReturnAttributes] = kCFBooleanTrue
        query[kSecMatchLimit] = kSecMatchLimitAll
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[CFString: Any]] else { throw VaultError(status: status) }
        return items.compactMap { $0[kSecAttrAccount] as? String }
    }
}
