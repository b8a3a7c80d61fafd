// What the keychain's keys and the gatekeeper say without opening an item, and never with a
// prompt: `keygate status`'s key facts, which gate keys the gatekeeper no longer holds
// (`keygate list`), Keygate 1.x's gate keys (their ids, their removal once every item moved, a
// this-device-only class's bound pair). The operations ask these through `KeyUnlocker.facts`,
// so that only Unlocking/ talks to the key source and the gatekeeper.
internal import KeygateGateWire

struct KeyFacts {
    let source: KeySource
    let gate: GateAccess
    let dataDirectory: String

    /// The keychain's keys as `keygate status` shows them. Never shows key bytes.
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

    /// GateAccess.invalidSlots of many items, several in flight at once.
    func invalidSlots(of items: [(blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity)]) -> [[GateKind]?] {
        gate.invalidSlots(of: items)
    }

    /// GateAccess.invalidSlots of one item.
    func invalidSlots(of blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity) throws -> [GateKind] {
        try gate.invalidSlots(of: blob, header: header, identity: identity)
    }

    /// The key ids of the presence and current-set pairs Keygate 1.x sealed gated items to,
    /// while the keychain still has them (empty once migrated).
    func legacyGateKeyIDs() -> [[UInt8]] {
        guard source.hasLegacyGateKeys,
              let recorded = try? PublicKeys.load(directory: dataDirectory)   // try?: damaged keys.json: nothing to name
        else { return [] }
        return [recorded.presenceKey, recorded.currentSetKey].compactMap { $0.map(BoxKeyPair.keyID(of:)) }
    }

    /// Once every 1.x item moved: 1.x's gate keys leave login.json and keys.json.
    func removeLegacyGateKeys() throws {
        try source.store.removeLegacyGateKeys()
    }

    /// Keygate 1.x's this-device-only class pair: its seed bound to the device key, which the gatekeeper holds.
    func legacyClassPair(_ master: SecureBytes, _ accessibility: Accessibility) throws -> BoxKeyPair {
        try BoxKeyPair.derive(seed: gate.legacyClassSeed(ClassKeys.seed(masterKey: master, for: accessibility)))
    }
}
