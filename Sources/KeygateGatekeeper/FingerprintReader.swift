// The gatekeeper's check before a fingerprint authentication: fprintd answers within its
// deadline, reports a reader, and the user has a finger enrolled on it (FprintdProbe). Each
// failure is a clear error at once, in Apple's terms where Apple has one (no reader:
// biometryNotAvailable; no finger: biometryNotEnrolled), instead of a PAM stack that waits;
// for an item that also takes the password, the answer that the password is asked instead.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import KeygateSystemBus

enum FingerprintReader {
    /// How long an item that also takes the password waits for fprintd before it asks for the
    /// password instead.
    static let fallbackDeadline = BusDeadline(.seconds(2))

    /// Whether a finger can be asked for now: fprintd answers within `fallbackDeadline`, reports
    /// a reader, and the user has a finger enrolled on it. Items that also take the password ask
    /// for it when not (userPresence, a biometry flag `or` devicePasscode).
    static func isReady(userName: String, environment: KeygateEnvironment) -> Bool {
        do {
            let status = try FprintdProbe.status(userName: userName, environment: environment, deadline: fallbackDeadline)
            return status.device != nil && !status.enrolledFingers.isEmpty
        } catch {
            // fprintd absent, hung or refusing: no finger can be read now, and the item asks for the password.
            return false
        }
    }

    static func requireReady(userName: String, environment: KeygateEnvironment) throws {
        let status = try FprintdProbe.status(userName: userName, environment: environment)
        guard let device = status.device else {
            throw KeychainError.notAvailable("""
                this item needs your fingerprint, and fprintd reports no fingerprint reader: connect one, or check `fprintd-list \
                \(userName)`
                """)
        }
        guard !status.enrolledFingers.isEmpty else {
            throw KeychainError.notAvailable("""
                this item needs your fingerprint, and you have no finger enrolled on \(device): enroll one with `fprintd-enroll`
                """)
        }
    }
}
