// The keys keygate-secret-service uses, from what the kernel keyring holds now and nothing
// else: whether the master key is cached (the default collection's Locked), and the
// when-unlocked class key its clients' items are sealed with. Never prompts, unlocks or creates
// a keychain: a locked keychain is the daemon's IsLocked, and its Unlock goes through `unlock()`.

extension KeyUnlocker {
    /// Whether the master key is cached: the keychain is unlocked.
    var masterKeyIsCached: Bool { source.cachedMaster != nil }

    var keychainExists: Bool { source.isInitialized }

    /// The when-unlocked class key from the cached master key; interaction-not-allowed when locked.
    func cachedWhenUnlockedClassKey() throws -> SecureBytes {
        guard let master = source.cachedMaster else {
            throw KeychainError.interactionNotAllowed("the keychain is locked: unlock it (keygate unlock, or the collection's Unlock)")
        }
        return try ClassKeys.derive(masterKey: master, for: .whenUnlocked)
    }
}
