// The names Keygate gives its entries in the user's kernel keyring, in one place. Only
// keys the user's own processes may hold are cached: the master key and the class keys
// derived from it. Gate keys (presence, current set, device) are root's and never cached
// here (docs/GATEKEEPER.md); Keygate 1.x's "presence.*", "current-set.*" and "device"
// entries are dropped by `keygate lock --all` like any other.

package enum CacheName: Sendable, Equatable {
    /// The unlocked master key, for the policy's lock-after time.
    case master
    /// The after-first-unlock class key (scheme 1), until reboot or `lock --all`.
    case afterFirstUnlock
    /// An after-first-unlock class's key pair (scheme 2), as long.
    case classPair(Accessibility)
    /// A class's public key (public), beside the master key and for no longer: a gated read
    /// then derives the private half only (KeyUnlocker.cachedClassKeyPair).
    case classPublicKey(Accessibility)

    package var text: String {
        switch self {
        case .master: return "master"
        case .afterFirstUnlock: return "class.after-first-unlock"
        case .classPair(let accessibility): return "classpair.\(accessibility.rawValue)"
        case .classPublicKey(let accessibility): return "classpub.\(accessibility.rawValue)"
        }
    }
}
