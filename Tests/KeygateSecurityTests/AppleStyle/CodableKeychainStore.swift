// Apple-style code: a Codable store, as apps keep typed records (credentials, sessions,
// settings) in the keychain. JSON in kSecValueData, the type's name in kSecAttrGeneric,
// listings through kSecMatchLimitAll with attributes and data together, renames through
// an attribute-only SecItemUpdate, and an optional LAContext for gated records (async).
// Written for Apple's SDK, imports included.
import Foundation
import LocalAuthentication
import Security

enum CodableStoreError: Error, Equatable {
    case keychain(OSStatus)
    case encoding
    case decoding

    /// The NSError Apple's Security would have made for this status.
    var nsError: NSError {
        switch self {
        case .keychain(let status):
            let cfError: CFError = CFErrorCreate(kCFAllocatorDefault, kCFErrorDomainOSStatus, CFIndex(status), nil)
            return cfError
        case .encoding: return NSError(domain: NSCocoaErrorDomain, code: 4866)
        case .decoding: return NSError(domain: NSCocoaErrorDomain, code: 4864)
        }
    }
}

final class CodableKeychainStore<Value: Codable> {
    let service: String
    private let typeTag: Data

    init(service: String) {
        self.service = service
        self.typeTag = Data(String(describing: Value.self).utf8)
    }

    private func query(_ id: String?) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        if let id = id { q[kSecAttrAccount as String] = id }
        return q
    }

    func save(_ value: Value, id: String, label: String? = nil, accessControl: SecAccessControl? = nil) throws {
        let data: Data
        do { data = try JSONEncoder().encode(value) } catch { throw CodableStoreError.encoding }
        var add = query(id)
        add[kSecValueData as String] = data
        add[kSecAttrGeneric as String] = typeTag
        if let label = label { add[kSecAttrLabel as String] = label }
        if let access = accessControl { add[kSecAttrAccessControl as String] = access }
        var status = SecItemAdd(add as CFDictionary, nil)
        if status == errSecDuplicateItem {
            var update: [String: Any] = [kSecValueData as String: data]
            if let label = label { update[kSecAttrLabel as String] = label }
            status = SecItemUpdate(query(id) as CFDictionary, update as CFDictionary)
        }
        guard status == errSecSuccess else { throw CodableStoreError.keychain(status) }
    }

    func load(id: String, context: LAContext? = nil) throws -> Value? {
        var q = query(id)
        q[kSecReturnData as String] = true
        if let context = context {
            q[kSecUseAuthenticationContext as String] = context
            q[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUIFail
        }
        var result: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound { return nil }
        guard status == errSecSuccess, let data = result as? Data else { throw CodableStoreError.keychain(status) }
        do { return try JSONDecoder().decode(Value.self, from: data) } catch { throw CodableStoreError.decoding }
    }

    /// Authenticates first (async LAContext), then reads without another prompt.
    func loadAuthenticated(id: String, reason: String) async throws -> Value? {
        let context = LAContext()
        context.localizedReason = reason
        _ = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: reason)
        return try load(id: id, context: context)
    }

    /// Every record of this type, with its label: one SecItemCopyMatching.
    func all() throws -> [(id: String, label: String?, value: Value)] {
        var q = query(nil)
        q[kSecMatchLimit as String] = kSecMatchLimitAll
        q[kSecReturnAttributes as String] = true
        q[kSecReturnData as String] = true
        q[kSecAttrGeneric as String] = typeTag
        var result: AnyObject?
        let status = SecItemCopyMatching(q as CFDictionary, &result)
        if status == errSecItemNotFound { return [] }
        guard status == errSecSuccess, let items = result as? [[String: Any]] else { throw CodableStoreError.keychain(status) }
        return try items.map { item in
            guard let id = item[kSecAttrAccount as String] as? String, let data = item[kSecValueData as String] as? Data else {
                throw CodableStoreError.decoding
            }
            do {
                return (id, item[kSecAttrLabel as String] as? String, try JSONDecoder().decode(Value.self, from: data))
            } catch { throw CodableStoreError.decoding }
        }.sorted { $0.id < $1.id }
    }

    /// Changes the label only: the record (and its seal) stays as it is.
    func rename(id: String, label: String) throws {
        let status = SecItemUpdate(query(id) as CFDictionary, [kSecAttrLabel as String: label] as CFDictionary)
        guard status == errSecSuccess else { throw CodableStoreError.keychain(status) }
    }

    func remove(id: String) throws {
        let status = SecItemDelete(query(id) as CFDictionary)
        guard status == errSecSuccess else { throw CodableStoreError.keychain(status) }
    }

    func removeAll() {
        _ = SecItemDelete(query(nil) as CFDictionary)
    }
}
