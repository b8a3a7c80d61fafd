// The keys keygate-secret-service uses, from what the kernel keyring holds now and nothing
// else: whether the master key is cached (the default collection's Locked), and the
// when-unlocked class key its clients' items are sealed with. Never unlocks or creates a
// keychain: a locked keychain is the daemon's IsLocked, and its Unlock goes through `unlock()`.
// The one step that asks the person is `openInPerson`: a gated item's prompt, fresh and
// unrecorded through the gatekeeper (no window is read, none is left).
internal import KeygateGateWire

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

    /// Seals as `sealGated` does, from what is held now only: the class public key recorded with the
    /// gatekeeper's seal, and the item's gate public keys (the gatekeeper's `keys`, which never
    /// prompts). A locked keychain, or one whose class keys were never sealed, is
    /// interaction-not-allowed with what to run: a Secret Service write never asks for a password.
    func sealGatedNow(_ secret: SecureBytes, _ attributes: ItemAttributes) throws -> [UInt8] {
        guard source.cachedMaster != nil else {
            throw KeychainError.interactionNotAllowed("the keychain is locked: unlock it (keygate unlock, or the collection's Unlock)")
        }
        guard let classKey = try source.sealedClassKey(for: attributes.accessibility) else {
            throw KeychainError.interactionNotAllowed(
                "the keychain's public keys carry no seal of the gatekeeper yet: run `keygate unlock` once, then store the item again")
        }
        let flags = attributes.accessControl?.rawValue ?? 0
        let gates = try gate.recipients(for: attributes.identity, accessControl: flags, classKey: classKey)
        return try GatedBlob.seal(secret, identity: attributes.identity, accessibility: attributes.accessibility,
                                  accessControl: flags, classKey: classKey.publicKey,
                                  gates: gates, combination: attributes.accessControl?.requiresAll == false ? .any : .all)
    }

    /// Opens a gated blob for one read through the Secret Service: the person authenticates now,
    /// as the item's flags say (the password through PAM, a finger through fprintd), through the
    /// gatekeeper's unrecorded presence, which reads no window or handle and leaves none (the
    /// gatekeeper sees this daemon, never its client, so nothing it records could be scoped to
    /// the one that asked). A policy floor above the sealed flags is asked for first, the same
    /// way. The class pair comes from the cached master key only: a locked keychain is
    /// interaction-not-allowed (the daemon's prompt opens the keychain before it asks for items).
    func openInPerson(_ need: ReadNeed, reason: String) throws -> SecureBytes {
        guard case .gated(let header, let slots) = need.seal, need.needsPresence else {
            throw KeychainError.param("the item \(need.identity.displayName) needs no person: it opens with the keychain's keys")
        }
        guard let classPair = source.cachedClassKeyPair(for: header.accessibility) else {
            throw KeychainError.interactionNotAllowed("the keychain is locked: unlock it first (keygate unlock, or the collection's Unlock)")
        }
        guard classPair.keyID == header.classSlot.keyID else {
            throw KeychainError.decode("the item \(need.identity.displayName) was sealed by another keychain: delete it and add it again")
        }
        try prompter.ensureAvailable()
        if let floor = need.floor {
            _ = try gate.requirePresence(for: need.identity, constraints: floor, reason: reason, fresh: false, unrecorded: true)
        }
        let opened = try gate.shares(of: need.blob, header: header, slots: slots, identity: need.identity, reason: reason,
                                     fresh: false, unrecorded: true)
        return try need.open(with: .gated(classPair: classPair, shares: opened.shares, classShare: nil))
    }
}
