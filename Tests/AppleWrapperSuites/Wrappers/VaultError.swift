// The Codable wrapper's error type, in SimpleKeychain's shape: an OSStatus mapped to a small
// set of codes, with Apple's message. Like SimpleKeychainError.swift, this file imports only
// Foundation and still uses OSStatus, the errSec* codes and SecCopyErrorMessageString.
import Foundation

struct VaultError: LocalizedError, CustomDebugStringConvertible, Equatable {
    enum Code: Equatable {
        case itemNotFound
        case duplicateItem
        case interactionNotAllowed
        case authFailed
        case userCanceled
        case decodingFailed
        case other(OSStatus)
    }

    let code: Code
    let status: OSStatus

    init(status: OSStatus) {
        self.status = status
        switch status {
        case errSecItemNotFound: code = .itemNotFound
        case errSecDuplicateItem: code = .duplicateItem
        case errSecInteractionNotAllowed: code = .interactionNotAllowed
        case errSecAuthFailed: code = .authFailed
        case errSecUserCanceled: code = .userCanceled
        case errSecDecode: code = .decodingFailed
        default: code = .other(status)
        }
    }

    static let decodingFailed = VaultError(status: errSecDecode)

    var errorDescription: String? {
        return (SecCopyErrorMessageString(status, nil) as String?) ?? "OSStatus \(status)"
    }

    var debugDescription: String { return "VaultError(\(code), \(status)): \(errorDescription ?? "")" }

    static func == (lhs: VaultError, rhs: VaultError) -> Bool { return lhs.code == rhs.code }
}
