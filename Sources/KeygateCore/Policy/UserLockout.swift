// The one lockout of a user (docs/GATEKEEPER.md, "One lockout per user"): after `threshold`
// failed authentications in a row, through any service and for any item, no authentication
// is tried for `seconds`. Its length is the strictest (longest) that the keychain-wide rules or
// any system section set: an item whose section says `lockout = 0` cannot turn it off, shorten
// it or reset it, since every item's authentications count against the same counter. Only an
// administrator who sets 0 everywhere turns it off. User files cannot change it.

public struct UserLockout: Sendable, Equatable {
    /// Consecutive failures that start it; 0 disables it.
    public var threshold: Int
    /// How long it lasts; 0 disables it.
    public var seconds: UInt32

    public init(threshold: Int, seconds: UInt32) {
        self.threshold = threshold
        self.seconds = seconds
    }

    public var isEnabled: Bool { threshold > 0 && seconds > 0 }
}

extension PolicySet {
    /// The user's lockout: the keychain-wide decision's, lengthened by any system section that
    /// sets a longer one. Fails closed like every decision when a system file is unusable.
    public func userLockout() throws -> UserLockout {
        let keychainWide = try keychainDecision().policy
        var seconds = keychainWide.lockoutSeconds
        for file in loaded where file.layer.isSystem {
            guard case .parsed(let parsed) = file.state, parsed.errors.isEmpty else { continue }
            for section in parsed.sections {
                if let value = section.settings.lockout { seconds = max(seconds, value) }
            }
        }
        return UserLockout(threshold: keychainWide.lockoutThreshold, seconds: seconds)
    }
}
