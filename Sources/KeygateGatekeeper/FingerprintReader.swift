// The gatekeeper's check before a fingerprint authentication: fprintd answers within its
// deadline, reports a reader, and the user has a finger enrolled on it (FprintdProbe). Each
// failure is a clear error at once, in Apple's terms where Apple has one (no reader:
// biometryNotAvailable; no finger: biometryNotEnrolled), instead of a PAM stack that waits.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import KeygateStorage

enum FingerprintReader {
    static func requireReady(userName: String) throws {
        let status = try FprintdProbe.status(userName: userName)
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
