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
        let initialized = keyStore.isInitialized
        return KeyState(initialized: initialized, cached: cache.entries(), lockout: try? gate.lockoutState(),
                        loginKDF: (try? keyStore.loginKDF()) ?? nil, loginStale: initialized && keyStore.isLoginStale)
    }

    /// `keygate validate`: the gatekeeper extends the presence window of the caller's scope from
    /// now when an authentication in it is still fresh, else authenticates through PAM (the
    /// prompt is this process's) and records the window. A locked keychain is opened with the
    /// password typed there (one prompt for both); an unlocked one is held for its lock-after
    /// from now. Returns whether the keychain is unlocked afterwards.
    func validate() throws -> Bool {
        let held = cache.load(Self.masterName)
        let locked = held == nil && keyStore.isInitialized && keyStore.hasLoginProtector
        let password = try gate.validate(reason: promptReason(for: .unlock), fresh: locked)
        if locked {
            try openAfterPresence(password)
        } else if let held {
            cacheUnlocked(held.key)
        }
        return cache.load(Self.masterName) != nil
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
        guard keyStore.hasLegacyGateKeys, let keys = try? PublicKeys.load(directory: context.dataDirectory) else { return [] }
        return [keys.presenceKey, keys.currentSetKey].compactMap { $0.map(BoxKeyPair.keyID(of:)) }
    }
}
