// From Keygate 1.x to the gatekeeper (docs/GATEKEEPER.md): 1.x sealed gated items to a
// presence and a current-set pair wrapped by the password, and this-device-only items to
// a class pair bound to the device key. The first password unlock after the upgrade
// (the first gated read, `keygate unlock`, `keygate passwd`) opens each such item with
// those keys and seals it again to the gatekeeper's per-item keys, one item at a time
// with the store's atomic replace: a crash leaves every item readable under the old or
// the new keys. Once every item moved, the 1.x keys are removed from login.json and
// keys.json. An item that does not open is left as it was and named in the notice.
//
// The password unlock only says it is owed (FollowUp.moveLegacyItems, with the 1.x pairs the
// password opened); the operation that made the unlock runs it after its own step
// (KeychainOperations.settle): after a read has opened its item (a 1.x item opens with those
// pairs, no second fetch), after `keygate unlock`, `validate`, `passwd`, and an add. The
// unlocker never holds the store.

struct LegacyGateMigration {
    let store: any ItemStore
    let unlocker: KeyUnlocker

    /// Moves every 1.x item; returns the blobs sealed again, by item.
    @discardableResult
    func run(_ unlocked: PasswordUnlock) throws -> [ItemIdentity: [UInt8]] {
        let legacyIDs = [unlocked.presence, unlocked.currentSet].compactMap { $0?.keyID }
        let legacyPairs = [unlocked.presence, unlocked.currentSet].compactMap { $0 }
        var moved: [ItemIdentity: [UInt8]] = [:]
        var failed: [String] = []
        for item in try store.search(ItemQuery(), loadBlobs: true) {
            // A blob that is not a gated one (or is damaged) has nothing of 1.x's to move.
            guard let blob = item.blob, !blob.isEmpty, let common = try? SealedBlob.header(of: blob),
                  common.scheme == GatedBlob.scheme, let header = try? GatedBlob.header(of: blob) else { continue }
            let usesLegacyGate = header.gateSlots.contains { legacyIDs.contains($0.keyID) }
            let legacyDevice = header.accessibility.isThisDeviceOnly && !header.gateSlots.contains { $0.kind == .device }
            guard usesLegacyGate || legacyDevice else { continue }
            let identity = item.attributes.identity
            do {
                let master = unlocked.masterKey
                let classPair = legacyDevice ? try unlocker.facts.legacyClassPair(master, header.accessibility)
                    : try ClassKeys.keyPair(masterKey: master, for: header.accessibility)
                let secret = try GatedBlob.open(blob, identity: identity, keys: legacyPairs + [classPair])
                // Sealed again with the blob's own class and flags (what 1.x sealed), stored with its attributes.
                // 1.x's current-set (Apple's biometryCurrentSet bit) was bound to the password: it moves to
                // Keygate's own current-set flag, which means just that (docs/ACCESS_CONTROL.md).
                var sealing = item.attributes
                sealing.accessibility = header.accessibility
                var flags = AccessControl(rawValue: header.accessControl)
                if flags.contains(.biometryCurrentSet) {
                    flags.remove(.biometryCurrentSet)
                    flags.insert(.currentSet)
                }
                sealing.accessControl = flags.rawValue == 0 ? nil : flags
                // The keychain was just unlocked with its seals recorded: sealing owes nothing more.
                let resealed = try unlocker.sealGated(secret, sealing).value
                try store.create(item.attributes, blob: resealed, replace: true)
                moved[identity] = resealed
            } catch {
                failed.append(identity.displayName)
            }
        }
        if failed.isEmpty {
            try unlocker.facts.removeLegacyGateKeys()
        } else {
            unlocker.prompter.notify("""
                Keygate moved \(moved.count) item(s) to its gatekeeper; \(failed.count) did not open with your keychain's 1.x keys and \
                were left as they were: \(failed.prefix(5).joined(separator: ", "))\(failed.count > 5 ? ", …" : ""). Delete and add \
                them again.
                """)
        }
        if !moved.isEmpty { unlocker.audit(.unlock, detail: "moved \(moved.count) items from 1.x gate keys to the gatekeeper") }
        return moved
    }
}
