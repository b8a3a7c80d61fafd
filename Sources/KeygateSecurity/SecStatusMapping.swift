// The one place a Keygate error becomes an OSStatus: KeychainError already carries
// Apple's status for each case (and the CLI exits with its low byte), so this reads it;
// anything else is errSecInternalComponent. The message is kept for
// SecCopyErrorMessageString. Delegates to KeychainError.
internal import Keygate

enum SecStatusMapping {
    static func status(for error: any Error) -> OSStatus {
        let status: OSStatus
        let message: String
        switch error {
        case let e as KeychainError:
            status = e.status
            message = e.message
        case let e as SecFailure:
            status = e.status
            message = e.message
        default:
            status = errSecInternalComponent
            message = "an unexpected error: \(error)"
        }
        SecLastFailure.record(status, message)
        return status
    }

    /// Runs a SecItem call's body and turns any error into its status.
    static func run(_ body: () throws -> OSStatus) -> OSStatus {
        do { return try body() } catch { return status(for: error) }
    }
}
