// What fprintd reports for the user now: a reader, the enrolled fingers, or why it cannot
// be asked. The public face of FprintdProbe for `keygate status`, `keygate doctor` and
// KeygateSecurity's LAContext (biometryType, canEvaluatePolicy), asked from the user's own
// process with a short deadline. It reveals nothing the user's `fprintd-list` does not;
// the enrolled-set digest stays root's (EnrolledPrints).
internal import KeygateSystemBus

public struct FingerprintState: Sendable, Equatable {
    /// The reader's name, nil when there is none or fprintd could not be asked.
    public let device: String?
    /// The user's enrolled fingers on it (fprintd's names).
    public let enrolledFingers: [String]
    /// Why fprintd could not be asked (not running, hung, no system bus), with the fix.
    public let problem: String?

    /// The state for `userName` now, within `seconds` (at most 5). `environment`: the caller's edge's
    /// (the system bus's address).
    public static func current(userName: String, seconds: Int = 2, environment: KeygateEnvironment) -> FingerprintState {
        do {
            let status = try FprintdProbe.status(userName: userName, environment: environment, deadline: BusDeadline(.seconds(max(1, min(seconds, 5)))))
            return FingerprintState(device: status.device, enrolledFingers: status.enrolledFingers, problem: nil)
        } catch let error as KeychainError {
            return FingerprintState(device: nil, enrolledFingers: [], problem: error.message)
        } catch {
            return FingerprintState(device: nil, enrolledFingers: [], problem: "fprintd could not be asked: \(error)")
        }
    }

    /// One line for `keygate status`: "fingerprint: READER, 2 fingers enrolled (…)".
    public var summary: String {
        if let problem { return "fingerprint: unavailable: \(problem)" }
        guard let device else { return "fingerprint: no reader (fprintd reports none)" }
        if enrolledFingers.isEmpty { return "fingerprint: \(device), no finger enrolled (fprintd-enroll)" }
        let count = enrolledFingers.count == 1 ? "1 finger" : "\(enrolledFingers.count) fingers"
        return "fingerprint: \(device), \(count) enrolled (\(enrolledFingers.joined(separator: ", ")))"
    }
}
