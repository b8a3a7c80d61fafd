// Satisfies what one read needs (ReadNeed, worked out by the read from the item and its
// policy): the presence a policy floor asks for, the class key or class pair from the cache or
// an unlock, and the item's gate shares from the gatekeeper. One prompt at most, and one run of
// the setuid gatekeeper on a locked keychain: the password typed for the gate also opens the
// keychain, and the same run seals the class keys and arms the finger unlock (the `unlocking`
// flag). The read then opens the item with what this returns, and runs what is still owed
// (Unlocked, FollowUp); this is the only step of a read that talks to the key source and the
// gatekeeper, and it never fetches or writes an item.
//
// An item Keygate 1.x sealed opens with the 1.x gate pairs the password unlock returns; moving
// it (and every other 1.x item) to the gatekeeper's keys is owed, and the operation runs it.
internal import KeygateGateWire

extension KeyUnlocker {
    func satisfy(_ need: ReadNeed) throws -> Unlocked<SatisfiedRead> {
        var owed: [FollowUp] = []
        if let floor = need.floor {
            try requirePasswordProtector()
            // A locked keychain: one prompt does both (the password typed also opens the master key).
            // A finger types no password: then the keychain is opened first, by itself.
            let locked = source.cachedMaster == nil && source.hasLoginProtector
                && authContext?.interactionNotAllowed != true && !floor.asksForFingerOnly
            let grant = try gate.requirePresence(for: need.identity, constraints: floor, reason: promptReason(for: .useItem),
                                                 fresh: locked, unlocking: locked ? source.recordedClassKeys() ?? [] : nil)
            if locked { owed = try opened(grant).owed }
        }
        switch need.seal {
        case .classKey:
            let classKey = try classKey(for: need.accessibility, createIfNeeded: false)
            return Unlocked(SatisfiedRead(need: need, keys: .classKey(classKey.value)), owed: owed + classKey.owed)
        case .gated(let header, let slots):
            return try satisfyGated(need, header: header, slots: slots).owing(owed)
        }
    }

    /// A scheme-2 blob: the gatekeeper opens the item's gate boxes if its policy holds now, and
    /// the class pair from the master key opens the class box.
    private func satisfyGated(_ need: ReadNeed, header: GatedBlob.Header, slots: [Int]) throws -> Unlocked<SatisfiedRead> {
        let needsPresence = need.needsPresence
        if needsPresence { try requirePasswordProtector() }
        var owed: [FollowUp] = []
        var locked = !source.classPairCached(header.accessibility)
        // Read only where it can matter (a locked keychain, a finger-only item): a read in its window pays nothing.
        let unarmed = locked && need.asksForFingerOnly && source.fingerCopy() == nil
        // Within its window a finger reopens the keychain first (as Touch ID unlocks an iPhone).
        let fingerTried = locked && needsPresence
        if fingerTried, try openWithFinger() != nil { locked = false }
        // One prompt does both only where the gate asks for the password: a finger types none, so
        // a locked keychain is opened first (the password), then the item (the finger).
        let fresh = locked && needsPresence && !need.asksForFingerOnly && source.hasLoginProtector
            && authContext?.interactionNotAllowed != true
        if locked && !fresh {
            if needsPresence, unarmed { try sayThePasswordComesFirst() }
            // A finger already tried (and refused) is not asked again: the password opens the keychain.
            owed += try (fingerTried ? unlock() : masterKey(createIfNeeded: false)).owed
        }
        let unlocking = fresh ? source.recordedClassKeys() ?? [] : nil
        let opened: (shares: [SecureBytes?], grant: GateAccess.Grant)
        // Inside a window the class half (an X25519 multiplication) is opened while the
        // gatekeeper's daemon decides on the gate half: the two run side by side.
        var early: (pair: BoxKeyPair, share: SecureBytes)?
        do {
            opened = try gate.shares(of: need.blob, header: header, slots: slots, identity: need.identity,
                                     reason: promptReason(for: .useItem), fresh: fresh, unlocking: unlocking, meanwhile: {
                // Only a pair that opens the class box is used; anything else leaves the full
                // derivation below to decide, with its own errors.
                guard !locked, let pair = source.cachedClassKeyPair(for: header.accessibility),
                      pair.keyID == header.classSlot.keyID,
                      let share = try? GatedBlob.classShare(of: need.blob, header: header, pair: pair)   // try?: nil leaves it to the full derivation
                else { return }
                early = (pair, share)
            })
        } catch let error as KeychainError where error.code == .itemNotFound && source.hasLegacyGateKeys {
            // An item Keygate 1.x sealed: its boxes name 1.x's keys, which the password opens. The
            // presence check for this read takes the password, so one prompt does both.
            let grant = try gate.requirePresence(for: need.identity, constraints: AccessControl(rawValue: header.accessControl),
                                                 reason: promptReason(for: .useItem), fresh: true,
                                                 unlocking: source.recordedClassKeys() ?? [])
            let unlocked = try self.opened(grant)
            return try satisfyLegacy(need, header: header, unlocked).owing(owed)
        }
        if fresh {
            owed += try self.opened(opened.grant).owed
        }
        let classPair: BoxKeyPair
        if let pair = early?.pair {
            classPair = pair
        } else {
            let derived = try classKeyPair(for: header.accessibility)
            owed += derived.owed
            classPair = derived.value
        }
        guard classPair.keyID == header.classSlot.keyID else {
            if need.isLegacyDeviceOnly, source.hasLegacyGateKeys {
                // Keygate 1.x bound this class's key to the device key; the password opens 1.x's gate pairs.
                return try satisfyLegacy(need, header: header, unlockWithPassword()).owing(owed)
            }
            if need.isLegacyDeviceOnly {
                throw KeychainError.itemNotFound("""
                    the item \(need.identity.displayName) was invalidated: Keygate 1.x sealed it to this host's device key, and it \
                    could not be moved to the gatekeeper (sealed on another host, or the host key changed); add it again
                    """)
            }
            throw KeychainError.decode("the item \(need.identity.displayName) was sealed by another keychain: delete it and add it again")
        }
        return Unlocked(SatisfiedRead(need: need, keys: .gated(classPair: classPair, shares: opened.shares, classShare: early?.share)),
                        owed: owed)
    }

    /// A 1.x item, opened with the 1.x gate pairs the password unlock returned and its class pair
    /// (bound to the device key for a this-device-only class). Moving it is owed.
    private func satisfyLegacy(_ need: ReadNeed, header: GatedBlob.Header,
                               _ unlocked: Unlocked<PasswordUnlock>) throws -> Unlocked<SatisfiedRead> {
        try unlocked.map { opened in
            let pairs = [opened.presence, opened.currentSet].compactMap { $0 }
            let classPair = need.isLegacyDeviceOnly
                ? try facts.legacyClassPair(opened.masterKey, header.accessibility)
                : try ClassKeys.keyPair(masterKey: opened.masterKey, for: header.accessibility)
            return SatisfiedRead(need: need, keys: .legacy(pairs + [classPair]))
        }
    }

    /// A finger-only item on a locked keychain no password unlock armed the finger for (the finger
    /// was enrolled after it): the password opens the keychain first, and the person is told why.
    /// Where nobody can type, that is the error, with what to run.
    private func sayThePasswordComesFirst() throws {
        guard !neverPrompt, authContext?.interactionNotAllowed != true else { return }
        do {
            try prompter.ensureAvailable()
        } catch {
            throw KeychainError.interactionNotAllowed("""
                the keychain is locked, and this item opens only with your finger: \(FingerReopen.passwordFirst), and there is \
                no terminal or askpass program to type it at: run `keygate unlock`, then read the item again
                """)
        }
        prompter.notify("The keychain is locked: \(FingerReopen.passwordFirst) (and since any `keygate lock --all`). Type your "
                        + "password to open the keychain; then your finger opens the item.")
    }
}
