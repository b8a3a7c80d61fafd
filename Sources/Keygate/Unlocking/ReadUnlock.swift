// Satisfies what one read needs (ReadNeed, worked out by the read from the item and its
// policy): the presence a policy floor asks for, the class key or class pair from the cache or
// an unlock, and the item's gate shares from the gatekeeper. One prompt at most: the password
// typed for the gate also opens a locked keychain. The read then opens the item with what this
// returns; this is the only step of a read that talks to the cache, the key store and the
// gatekeeper.
//
// An item Keygate 1.x sealed is moved by the unlock this makes (LegacyGateMigration, which the
// password unlock runs); the blob the migration sealed again is what is then satisfied, with
// no second fetch.

extension KeyUnlocker {
    func satisfy(_ need: ReadNeed) throws -> SatisfiedRead {
        if let floor = need.floor {
            try requirePasswordProtector()
            // A locked keychain: one prompt does both (the password typed also opens the master key).
            // A finger types no password: then the keychain is opened first, by itself.
            let locked = cache.load(Self.masterName) == nil && keyStore.hasLoginProtector
                && authContext?.interactionNotAllowed != true && !floor.asksForFingerOnly
            let password = try gate.requirePresence(for: need.identity, constraints: floor,
                                                    reason: promptReason(for: .useItem), fresh: locked)
            if locked { try openAfterPresence(password) }
        }
        switch need.seal {
        case .classKey:
            return SatisfiedRead(need: need, keys: .classKey(try classKey(for: need.accessibility, createIfNeeded: false)))
        case .gated(let header, let slots):
            return try satisfyGated(need, header: header, slots: slots, moved: false)
        }
    }

    /// A scheme-2 blob: the gatekeeper opens the item's gate boxes if its policy holds now, and
    /// the class pair from the master key opens the class box. `moved`: the blob is one the 1.x
    /// migration just sealed again (it is not moved twice).
    private func satisfyGated(_ need: ReadNeed, header: GatedBlob.Header, slots: [Int], moved: Bool) throws -> SatisfiedRead {
        let needsPresence = need.needsPresence
        if needsPresence { try requirePasswordProtector() }
        var locked = !classPairCached(header.accessibility)
        // Within its window a finger reopens the keychain first (as Touch ID unlocks an iPhone).
        if locked, needsPresence, try openWithFinger() != nil { locked = false }
        // One prompt does both only where the gate asks for the password: a finger types none, so
        // a locked keychain is opened first (the password), then the item (the finger).
        let fresh = locked && needsPresence && !need.asksForFingerOnly && keyStore.hasLoginProtector
            && authContext?.interactionNotAllowed != true
        if locked && !fresh { _ = try masterKey(createIfNeeded: false) }
        let opened: (shares: [SecureBytes?], password: SecureBytes?)
        // Inside a window the class half (an X25519 multiplication) is opened while the
        // gatekeeper's daemon decides on the gate half: the two run side by side.
        var early: (pair: BoxKeyPair, share: SecureBytes)?
        do {
            opened = try gate.shares(of: need.blob, header: header, slots: slots, identity: need.identity,
                                     reason: promptReason(for: .useItem), fresh: fresh, meanwhile: {
                // Only a pair that opens the class box is used; anything else leaves the full
                // derivation below to decide, with its own errors.
                guard !locked, let pair = cachedClassKeyPair(for: header.accessibility),
                      pair.keyID == header.classSlot.keyID,
                      let share = try? GatedBlob.classShare(of: need.blob, header: header, pair: pair) else { return }
                early = (pair, share)
            })
        } catch let error as KeychainError where error.code == .itemNotFound && !moved && keyStore.hasLegacyGateKeys {
            // An item Keygate 1.x sealed: the first password unlock moves every such item. The
            // presence check for this read takes the password, so one prompt does both.
            let password = try gate.requirePresence(for: need.identity, constraints: AccessControl(rawValue: header.accessControl),
                                                    reason: promptReason(for: .useItem), fresh: true)
            guard let blob = try openAfterPresence(password)[need.identity] else { throw error }
            return try satisfyMoved(need.identity, blob)
        }
        if fresh { try openAfterPresence(opened.password) }
        let classPair = try early?.pair ?? classKeyPair(for: header.accessibility)
        guard classPair.keyID == header.classSlot.keyID else {
            if need.isLegacyDeviceOnly, !moved, keyStore.hasLegacyGateKeys {
                // Keygate 1.x bound this class's key to the device key: the first password unlock moves it.
                if let blob = try unlockMovingLegacyItems()[need.identity], blob != need.blob {
                    return try satisfyMoved(need.identity, blob)
                }
            }
            if need.isLegacyDeviceOnly {
                throw KeychainError.itemNotFound("""
                    the item \(need.identity.displayName) was invalidated: Keygate 1.x sealed it to this host's device key, and it \
                    could not be moved to the gatekeeper (sealed on another host, or the host key changed); add it again
                    """)
            }
            throw KeychainError.decode("the item \(need.identity.displayName) was sealed by another keychain: delete it and add it again")
        }
        return SatisfiedRead(need: need, keys: .gated(classPair: classPair, shares: opened.shares, classShare: early?.share))
    }

    /// The item as the 1.x migration sealed it again, satisfied once more (never moved again).
    private func satisfyMoved(_ identity: ItemIdentity, _ blob: [UInt8]) throws -> SatisfiedRead {
        let need = try ReadNeed(identity: identity, blob: blob)
        guard case .gated(let header, let slots) = need.seal else {
            return SatisfiedRead(need: need, keys: .classKey(try classKey(for: need.accessibility, createIfNeeded: false)))
        }
        return try satisfyGated(need, header: header, slots: slots, moved: true)
    }

    /// Whether the class pair opens without an unlock (the master key or an after-first-unlock pair is cached).
    private func classPairCached(_ accessibility: Accessibility) -> Bool {
        if accessibility.survivesLock, cache.load(CacheName.classPair(accessibility).text) != nil { return true }
        return cache.load(Self.masterName) != nil
    }
}
