// Apple-style code: a session store that keeps a JSON-encoded session object in the
// keychain, with a label and comment, and reports the OSStatus message on failure.
import Foundation
import Security

struct Session: Codable, Equatable {
    let userID: String
    let accessToken: String
    let refreshToken: String
    let expiresAt: Date
}

final class SessionStore {
    static let shared = SessionStore(service: "com.example.session")

    let service: String
    private let account = "current-session"
    private(set) var lastError: String?

    init(service: String) {
        self.service = service
    }

    func save(_ session: Session) -> Bool {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(session) else { return false }
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
        ]
        let attributes: [String: Any] = [
            kSecValueData as String: data,
            kSecAttrLabel as String: "Example session",
            kSecAttrComment as String: "refreshed by the app",
        ]
        var status = SecItemUpdate(query as CFDictionary, attributes as CFDictionary)
        if status == errSecItemNotFound {
            let newItem = query.merging(attributes) { $1 }
            status = SecItemAdd(newItem as CFDictionary, nil)
        }
        if status != errSecSuccess {
            lastError = SecCopyErrorMessageString(status, nil) as String?
        }
        return status == errSecSuccess
    }

    func load() -> Session? {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
            kSecAttrAccount as String: account,
            kSecReturnData as String: true,
        ]
        var item: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &item)
        guard status == errSecSuccess, let data = item as? Data else {
            if status != errSecItemNotFound { lastError = SecCopyErrorMessageString(status, nil) as String? }
            return nil
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try? decoder.decode(Session.self, from: data)
    }

    func clear() {
        let query: [String: Any] = [
            kSecClass as String: kSecClassGenericPassword,
            kSecAttrService as String: service,
        ]
        SecItemDelete(query as CFDictionary)
    }
}
