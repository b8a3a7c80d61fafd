// The effective rules for the keychain: how long an unlock lasts, which PAM
// service authenticates, how many tries a prompt gets. These are the shipped
// defaults of policies/00-default.policy; the policy-file parser that lets
// administrators change them builds on this type.

public struct Policy: Sendable, Equatable {
    /// Seconds the unlocked master key stays cached in the kernel keyring (idle lock).
    public var lockAfter: UInt32
    /// The PAM service that authenticates an unlock.
    public var pamService: String
    /// Password tries per prompt, like sudo's passwd_tries.
    public var maxTries: Int

    public init(lockAfter: UInt32 = 900, pamService: String = "keygate", maxTries: Int = 3) {
        self.lockAfter = lockAfter
        self.pamService = pamService
        self.maxTries = maxTries
    }

    /// The defaults shipped in policies/00-default.policy.
    public static let `default` = Policy()
}
