// Remembers, per OSStatus, Keygate's message for the most recent SecItem failure with that
// status, so SecCopyErrorMessageString can say what to do. Messages never hold a secret
// (KeychainError's rule). Nothing here delegates.
import Synchronization

enum SecLastFailure {
    private static let messages = Mutex<[OSStatus: String]>([:])

    static func record(_ status: OSStatus, _ message: String) {
        messages.withLock { $0[status] = message }
    }

    static func advice(for status: OSStatus) -> String? {
        messages.withLock { $0[status] }
    }
}
