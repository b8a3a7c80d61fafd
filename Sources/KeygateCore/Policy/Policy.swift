// The effective rules for the keychain: how long an unlock lasts, which PAM
// service authenticates, how many tries a prompt gets, how long an access-control
// authentication is reused and by whom, and when repeated failures lock gated items.
// These are the shipped defaults of policies/00-default.policy; the policy-file parser
// that lets administrators change them builds on this type.

public struct Policy: Sendable, Equatable {
    /// Seconds the unlocked master key stays cached in the kernel keyring (idle lock).
    public var lockAfter: UInt32
    /// The PAM service that authenticates an unlock and user-presence / current-set items.
    public var pamService: String
    /// Password tries per prompt, like sudo's passwd_tries.
    public var maxTries: Int
    /// Seconds an unwrapped constraint key stays cached after an authentication (sudo's
    /// timestamp_timeout); 0 asks every time.
    public var reuseDuration: UInt32
    /// Which processes share one reuse window (sudo's timestamp_type).
    public var reuseScope: ReuseScope.Kind
    /// The PAM service for device-passcode items (password only).
    public var passcodePamService: String
    /// The PAM service for biometry-any and biometry-current-set items: pam_fprintd (pam.d/keygate-biometry).
    public var biometryPamService: String
    /// Consecutive failed authentications that start a lockout; 0 disables the lockout.
    public var lockoutThreshold: Int
    /// How long a lockout lasts, in seconds.
    public var lockoutSeconds: UInt32
    /// Seconds after the last password unlock during which a matching finger may reopen the
    /// locked keychain (Apple's 48 hours); 0: never. Keychain-wide.
    public var fingerUnlock: UInt32 = 172_800

    public init(lockAfter: UInt32 = 900, pamService: String = "keygate", maxTries: Int = 3,
                reuseDuration: UInt32 = 300, reuseScope: ReuseScope.Kind = .tty,
                passcodePamService: String = "keygate-passcode", biometryPamService: String = "keygate-biometry",
                lockoutThreshold: Int = 5, lockoutSeconds: UInt32 = 60) {
        self.lockAfter = lockAfter
        self.pamService = pamService
        self.maxTries = maxTries
        self.reuseDuration = reuseDuration
        self.reuseScope = reuseScope
        self.passcodePamService = passcodePamService
        self.biometryPamService = biometryPamService
        self.lockoutThreshold = lockoutThreshold
        self.lockoutSeconds = lockoutSeconds
    }

    /// The defaults shipped in policies/00-default.policy.
    public static let `default` = Policy()
}
