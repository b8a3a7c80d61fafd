// Apple's LABiometryType: `.touchID` (a fingerprint reader, as on a Mac) when fprintd reports
// a reader (LAContext.biometryType, through FingerprintState); `.none` otherwise. Face and
// optic ID do not exist on Linux. PAMStackProbe reads PAM service files (/etc/pam.d; debug
// builds: KEYGATE_TEST_PAM_CONFDIR, as Keygate's PAM code does) for the passcode policy.

internal import Keygate

public enum LABiometryType: Int, Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
    case opticID = 4

    @available(*, deprecated, renamed: "none")
    public static let LABiometryNone = LABiometryType.none
}

enum PAMStackProbe {
    /// Where the PAM service files are read from, in `environment` (the caller's edge's).
    static func confdir(_ environment: KeygateEnvironment) -> String {
        environment.testHooks.pamConfdir ?? "/etc/pam.d"
    }

    static func serviceExists(_ service: String = "keygate", environment: KeygateEnvironment) -> Bool {
        FileManager.default.fileExists(atPath: confdir(environment) + "/" + service)
    }
}
