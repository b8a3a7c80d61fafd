// Apple-style code: a static helper struct with [CFString: Any] queries, CFTypeRef?
// results, `as! Data`, delete-then-add, and JSON-encoded Codable values. The Apple original,
// imports included.
import Foundation
import Security

enum KeychainHelperError: Error, Equatable {
    case unhandled(OSStatus)
    case notFound
}

struct KeychainHelper {
    static func save(_ data: Data, service: String, account: String) throws {
        let query = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecValueData: data,
        ] as CFDictionary
        // Delete any old value first, then add.
        SecItemDelete(query)
        let status = SecItemAdd(query, nil)
        guard status == errSecSuccess else { throw KeychainHelperError.unhandled(status) }
    }

    static func read(service: String, account: String) throws -> Data {
        let query = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecReturnData: kCFBooleanTrue!,
            kSecMatchLimit: kSecMatchLimitOne,
        ] as CFDictionary
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query, &result)
        if status == errSecItemNotFound { throw KeychainHelperError.notFound }
        guard status == errSecSuccess else { throw KeychainHelperError.unhandled(status) }
        return result as! Data
    }

    static func attributes(service: String, account: String) -> [CFString: Any]? {
        let query: [CFString: Any] = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
            kSecReturnAttributes: kCFBooleanTrue as Any,
            kSecReturnData: kCFBooleanTrue as Any,
        ]
        var result: AnyObject?
        guard SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? [CFString: Any]
    }

    static func delete(service: String, account: String) {
        let query = [
            kSecClass: kSecClassGenericPassword,
            kSecAttrService: service,
            kSecAttrAccount: account,
        ] as CFDictionary
        SecItemDelete(query)
    }

    static func save<T: Codable>(_ item: T, service: String, account: String) throws {
        let data = try JSONEncoder().encode(item)
        try save(data, service: service, account: account)
    }

    static func read<T: Codable>(service: String, account: String, type: T.Type) -> T? {
        guard let data = try? read(service: service, account: account) else { return nil }
        return try? JSONDecoder().decode(type, from: data)
    }
}
