// The errors keygate-secret-service answers with: the specification's own (IsLocked, NoSession,
// NoSuchObject) and D-Bus's standard ones, each with a message that says what happened and
// what to do. Objects throw these; the daemon turns each into one error reply.
import Keygate
import KeygateCore

package enum SecretServiceErrorName {
    package static let isLocked = "org.freedesktop.Secret.Error.IsLocked"
    package static let noSession = "org.freedesktop.Secret.Error.NoSession"
    package static let noSuchObject = "org.freedesktop.Secret.Error.NoSuchObject"
    package static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    package static let notSupported = "org.freedesktop.DBus.Error.NotSupported"
    package static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
    package static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    package static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    package static let failed = "org.freedesktop.DBus.Error.Failed"
}

package struct SecretServiceError: Error, Sendable, Equatable {
    package let name: String
    package let message: String

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    package static func isLocked(_ what: String) -> SecretServiceError {
        SecretServiceError(SecretServiceErrorName.isLocked, "\(what) is locked: call Unlock first (the keychain opens at login, or with keygate unlock)")
    }

    package static func noSession(_ path: String) -> SecretServiceError {
        SecretServiceError(SecretServiceErrorName.noSession, "no session \(path) is open for this connection: call OpenSession first")
    }

    package static func noSuchObject(_ path: String) -> SecretServiceError {
        SecretServiceError(SecretServiceErrorName.noSuchObject, "no such object: \(path)")
    }

    package static func invalid(_ message: String) -> SecretServiceError {
        SecretServiceError(SecretServiceErrorName.invalidArgs, message)
    }

    /// A store or keychain failure, worded by Keygate: locked is IsLocked, a bad value
    /// InvalidArgs, anything else Failed with Keygate's message.
    package static func from(_ error: any Error, what: String) -> SecretServiceError {
        if let error = error as? SecretServiceError { return error }
        guard let keychain = error as? KeychainError else {
            return SecretServiceError(SecretServiceErrorName.failed, "\(what) failed: \(error)")
        }
        switch keychain.code {
        case .interactionNotAllowed: return .isLocked(what)
        case .param: return .invalid(keychain.message)
        case .itemNotFound: return .noSuchObject(what)
        default: return SecretServiceError(SecretServiceErrorName.failed, keychain.message)
        }
    }
}
