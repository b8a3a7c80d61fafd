// What the keychain's keys and the gatekeeper say without opening an item: `keygate status`'s
// key facts, `keygate validate` (as `sudo -v`), which gate keys the gatekeeper no longer
// holds (`keygate list`), and the 1.x gate keys' ids. The operations ask these here, so that
// the unlocker alone talks to the cache, the key store and the gatekeeper.

extension KeyUnlocker {
    /// The keychain's keys as `keygate status` shows them. Never prompts, never shows key bytes.
    struct KeyState {
        var initialized: Bool
        /// The keys the kernel keyring holds for this user.
        var cached: [CacheEntry]
        /// The user's lockout from root's records; nil when the gatekeeper could not be asked.
        var lockout: (secondsLeft: UInt32, failedAttempts: UInt32)?
        var loginKDF: KDFParameters?
        var loginStale: Bool
    }

    func state() -> KeyState {
        let initialized = source.isInitialized
        let lockout = try? gate.lockoutState()   // try?: nil is shown as "the gatekeeper could not be asked"
        let kdf = (try? source.store.loginKDF()) ?? nil   // try?: a damaged login.json shows no cost; doctor names the file
        return KeyState(initialized: initialized, cached: source.cache.entries(), lockout: lockout,
                        loginKDF: kdf, loginStale: initialized && source.store.isLoginStale)
    }

    /// `keygate validate`: the gatekeeper extends the presence window of the caller's scope from
    /// now when an authentication in it is still fresh, else authenticates through PAM (the
    /// prompt is this process's) and records the window. A locked keychain is opened with the
    /// password typed there (one prompt for both); an unlocked one is held for its lock-after
    /// from now. Returns whether the keychain is unlocked afterwards, and what its unlock owes.
    func validate() throws -> Unlocked<Bool> {
        let held = source.cachedMaster
        let locked = held == nil && source.isInitialized && source.hasLoginProtector
        let grant = try gate.validate(reason: promptReason(for: .unlock), fresh: locked,
                                      unlocking: locked ? source.recordedClassKeys() ?? [] : nil)
        var owed: [FollowUp] = []
        if locked {
            owed = try opened(with: Self.requirePassword(grant.password, service: context.policy.pamService), grant).owed
        } else if let held {
            hold(held)
        }
        return Unlocked(source.cachedMaster != nil, owed: owed)
    }

    /// GateAccess.invalidSlots of many items, several in flight at once (no prompt).
    func invalidSlots(of items: [(blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity)]) -> [[GateKind]?] {
        gate.invalidSlots(of: items)
    }

    /// GateAccess.invalidSlots of one item (no prompt).
    func invalidSlots(of blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity) throws -> [GateKind] {
        try gate.invalidSlots(of: blob, header: header, identity: identity)
    }

    /// The key ids of the presence and current-set pairs Keygate 1.x sealed gated items to,
    /// while the keychain still has them (empty once migrated).
    func legacyGateKeyIDs() -> [[UInt8]] {
        guard source.hasLegacyGateKeys,
              let recorded = try? PublicKeys.load(directory: context.dataDirectory)   // try?: damaged keys.json: nothing to name
        else { return [] }
        return [recorded.presenceKey, recorded.currentSetKey].compactMap { $0.map(BoxKeyPair.keyID(of:)) }
    }

    /// Once every 1.x item moved: 1.x's gate keys leave login.json and keys.json.
    func removeLegacyGateKeys() throws {
        try source.store.removeLegacyGateKeys()
    }
}
