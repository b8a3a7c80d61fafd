// Apple-style code: a biometric session store. The token is stored with
// SecAccessControlCreateWithFlags(.biometryCurrentSet) and read on a background queue
// with an LAContext in kSecUseAuthenticationContext, completion on a callback.
import Foundation
import LocalAuthentication
import Security

enum BiometricError: Error {
    case accessControl(Error?)
    case status(OSStatus)
    case noData
}

final class BiometricSessionStore {
    static let shared = BiometricSessionStore()

    var service = "com.example.biometric"
    private let queue = DispatchQueue(label: "com.example.biometric.keychain", qos: .userInitiated)

    func store(token: Data, account: String) throws {
        var error: Unmanaged<CFError>?
        guard let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault,
                                                           kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
                                                           .biometryCurrentSet,
                                                           &error) else {
            throw BiometricError.accessControl(error?.takeRetainedValue() as Error?)
        }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        SecItemDelete(query as CFDictionary)
        var attributes = query
        attributes[kSecAttrAccessControl as String] = access
        attributes[kSecValueData as String] = token
        let status = SecItemAdd(attributes as CFDictionary, nil)
        guard status == errSecSuccess else { throw BiometricError.status(status) }
    }

    func readToken(account: String, context: LAContext, reason: String,
                   completion: @escaping (Result<Data, BiometricError>) -> Void) {
        context.localizedReason = reason
        queue.async {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: self.service,
                kSecAttrAccount as String: account,
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitOne,
                kSecUseAuthenticationContext as String: context,
                kSecUseOperationPrompt as String: reason,
            ]
            var result: AnyObject?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            guard status == errSecSuccess else { return completion(.failure(.status(status))) }
            guard let data = result as? Data else { return completion(.failure(.noData)) }
            completion(.success(data))
        }
    }

    func hasToken(account: String) -> Bool {
        let context = LAContext()
        context.interactionNotAllowed = true
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecUseAuthenticationContext as String: context,
        ]
        return SecItemCopyMatching(query as CFDictionary, nil) == errSecSuccess
    }
}
