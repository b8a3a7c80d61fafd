// The one public error type. Each case carries Apple's OSStatus, and the CLI exits
// with `status & 0xFF` the way macOS `security` does. Every message says what
// happened and what to do next; none is ever built with a secret in it. Code that must
// tell errors apart beyond the OSStatus branches on the internal `Reason`, set where the
// error is made, never on the message text (which is for people and may be reworded).

/// Apple's status type, with Apple's values.
public typealias OSStatus = Int32

public struct KeychainError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: Sendable, Equatable, CaseIterable {
        /// The item does not exist, or it was invalidated.
        case itemNotFound
        /// An item with the same primary key already exists.
        case duplicateItem
        /// The password (or other credential) was wrong.
        case authFailed
        /// The person at the prompt gave up.
        case userCanceled
        /// A prompt is needed but none can be shown, or the store is locked.
        case interactionNotAllowed
        /// No session bus, no Secret Service, or a store that cannot be used.
        case notAvailable
        /// A bad parameter: bad flags, a bad query, an oversize value.
        case param
        /// A corrupt or foreign blob.
        case decode

        public var status: OSStatus {
            switch self {
            case .itemNotFound: return -25300
            case .duplicateItem: return -25299
            case .authFailed: return -25293
            case .userCanceled: return -128
            case .interactionNotAllowed: return -25308
            case .notAvailable: return -25291
            case .param: return -50
            case .decode: return -26275
            }
        }

        /// Apple's constant name, for messages and the compatibility layer.
        public var name: String {
            switch self {
            case .itemNotFound: return "errSecItemNotFound"
            case .duplicateItem: return "errSecDuplicateItem"
            case .authFailed: return "errSecAuthFailed"
            case .userCanceled: return "errSecUserCanceled"
            case .interactionNotAllowed: return "errSecInteractionNotAllowed"
            case .notAvailable: return "errSecNotAvailable"
            case .param: return "errSecParam"
            case .decode: return "errSecDecode"
            }
        }
    }

    /// Why, beyond `code`, for the few places in Keygate that must tell errors of one code apart.
    /// Package-wide: callers outside Keygate see only `code` and `message`.
    package enum Reason: Sendable, Equatable {
        /// The Secret Service no longer knows the session a call named (the daemon restarted).
        case staleSession
        /// The Secret Service's default collection is locked.
        case lockedCollection
        /// The collection is open, but the provider locks the items for this client until the
        /// user grants it access (KeePassXC's "Confirm when passwords are retrieved by clients").
        case lockedItem
        /// The Secret Service named no default collection (ReadAlias answered "/").
        case noDefaultCollection
        /// The Secret Service's process went away during a call (nobody owns its bus name now).
        case providerQuit
        /// The Secret Service did not answer within the deadline.
        case secretServiceTimeout
        /// The TPM answered but refused the work (to seal, to make its storage root key, or to load the
        /// sealed host key); the message names the TPM and says why.
        case tpmRefused
        /// The password given does not open the login protector.
        case wrongPassword
    }

    public let code: Code
    /// What happened and what to do, in one or two sentences.
    public let message: String
    /// Set where the error is made, when something branches on it; nil otherwise.
    package let reason: Reason?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        self.reason = nil
    }

    package init(_ code: Code, _ message: String, reason: Reason?) {
        self.code = code
        self.message = message
        self.reason = reason
    }

    /// Equal when the code and message are: the reason is internal detail (and does not cross
    /// the gatekeeper's wire), so an error read back from a reply equals the one sent.
    public static func == (a: KeychainError, b: KeychainError) -> Bool {
        a.code == b.code && a.message == b.message
    }

    /// The same error with `reason` set.
    package func because(_ reason: Reason) -> KeychainError {
        KeychainError(code, message, reason: reason)
    }

    public var status: OSStatus { code.status }

    /// The process exit status, as macOS `security` computes it.
    public var exitCode: Int32 { Int32(UInt32(bitPattern: status) & 0xFF) }

    public var description: String { message }
}

extension KeychainError {
    package static func itemNotFound(_ message: String) -> KeychainError { .init(.itemNotFound, message) }
    package static func duplicateItem(_ message: String) -> KeychainError { .init(.duplicateItem, message) }
    package static func authFailed(_ message: String) -> KeychainError { .init(.authFailed, message) }
    package static func userCanceled(_ message: String) -> KeychainError { .init(.userCanceled, message) }
    package static func interactionNotAllowed(_ message: String) -> KeychainError { .init(.interactionNotAllowed, message) }
    package static func notAvailable(_ message: String) -> KeychainError { .init(.notAvailable, message) }
    package static func param(_ message: String) -> KeychainError { .init(.param, message) }
    package static func decode(_ message: String) -> KeychainError { .init(.decode, message) }
}
