// What keygate-secret-service asks of the keychain beyond the public operations: the user's
// keychain on its embedded store (whatever the store setting says: the daemon serves that
// file), whether the master key is in the kernel keyring now (the collection's Locked), and
// sealing and opening the items Secret Service clients make with the keychain's class key,
// from the cached master key only: nothing here prompts, unlocks or creates a keychain.
//
// Delegates: keys to KeyUnlocker (KeyUnlocker+SecretService), sealing to KeygateCore's SealedBlob.

extension KeychainOperations {
    /// The user's keychain on its embedded store, with `prompter` for an unlock the daemon runs
    /// (the collection's Unlock). `environment`: the daemon's, read once at its start.
    package static func secretService(prompter: any Prompter, environment: KeygateEnvironment) throws
        -> (operations: KeychainOperations, store: EmbeddedStore) {
        let context = try KeychainContext.current(environment: environment)
        let store = EmbeddedStore(directory: context.dataDirectory, deadline: context.storeDeadline, keepOpen: true)
        let keys = KeyUnlocker(context: context, prompter: prompter, reason: "unlock the keychain for the Secret Service",
                               authContext: nil)
        return (KeychainOperations(store: store, keys: keys, storeSelection: nil, unlockPrompt: .never), store)
    }

    /// Whether the master key is cached: the keychain is unlocked.
    package var isUnlocked: Bool { keys.masterKeyIsCached }

    /// Whether the keychain exists (`keygate init`, or the first login through pam_keygate).
    package var isInitialized: Bool { keys.keychainExists }

    /// The keychain's data folder (the embedded store's).
    package var dataDirectory: String { keys.context.dataDirectory }

    /// Seals `secret` for a client's item bound to `identity`, with the when-unlocked class key.
    /// Throws interaction-not-allowed when the keychain is locked.
    package func sealForClient(_ secret: SecureBytes, identity: ItemIdentity) throws -> [UInt8] {
        try SealedBlob.seal(secret, identity: identity, accessibility: .whenUnlocked, classKey: keys.cachedWhenUnlockedClassKey())
    }

    /// Opens what `sealForClient` sealed. Throws interaction-not-allowed when the keychain is locked.
    package func openForClient(_ blob: [UInt8], identity: ItemIdentity) throws -> SecureBytes {
        try SealedBlob.open(blob, identity: identity, classKey: keys.cachedWhenUnlockedClassKey())
    }

    /// Whether `blob` needs a person for every read (a gate slot of presence, biometry or the
    /// current set): such an item is never opened with cached keys through the Secret Service.
    /// A this-device-only item's device slot alone needs no person.
    package static func needsPerson(_ blob: [UInt8]) -> Bool {
        guard let header = try? SealedBlob.header(of: blob), header.scheme == GatedBlob.scheme else { return false }
        guard let gated = try? GatedBlob.header(of: blob) else { return true }
        return gated.gateSlots.contains { $0.kind != .device }
    }

    /// The secret of Keygate's own item `identity` as the CLI reads it (its policy, the gatekeeper
    /// for a this-device-only item), when that needs no person: a gated blob, or a policy floor
    /// that asks for one, is interaction-not-allowed before anything is asked. Nil: no such item.
    package func secretWithoutPerson(for identity: ItemIdentity) throws -> SecureBytes? {
        guard let item = try storedItem(identity) else { return nil }
        let needsPerson = KeychainError.interactionNotAllowed("\(identity.displayName) needs a person for each read")
        guard let blob = item.blob, !Self.needsPerson(blob) else { throw needsPerson }
        let decision = try keys.context.decision(for: identity)
        let need = try ReadNeed(item: item, identity: identity, decision: decision)
        guard need.floor == nil, !need.needsPresence else { throw needsPerson }
        let keys = self.keys.applying(decision, for: identity)
        let satisfied = try keys.satisfy(need)
        let secret = try satisfied.value.open()
        try settle(satisfied.owed, by: keys)
        return secret
    }

    /// The secret of Keygate's own gated item `identity` for one read through the Secret Service:
    /// the person authenticates now, fresh and unrecorded (KeyUnlocker.openInPerson), and `reason`
    /// is what the prompt says. Nil: no such item.
    package func secretInPerson(for identity: ItemIdentity, reason: String) throws -> SecureBytes? {
        guard let item = try storedItem(identity) else { return nil }
        return try secretInPerson(of: item, reason: reason)
    }

    /// `secretInPerson(for:)` of an item already fetched with its blob (the daemon's loop fetched it,
    /// so the worker that asks the person touches no store).
    package func secretInPerson(of item: StoredItem, reason: String) throws -> SecureBytes {
        let identity = item.attributes.identity
        let decision = try context.decision(for: identity)
        let need = try ReadNeed(item: item, identity: identity, decision: decision)
        return try keys.applying(decision, for: identity).openInPerson(need, reason: reason)
    }

    /// A Secret Service client's gated item (sealed by `sealGatedForClient` to its bytes `uid`),
    /// for one read: the person authenticates now, fresh and unrecorded.
    package func openClientInPerson(_ blob: [UInt8], uid: [UInt8], reason: String) throws -> SecureBytes {
        let identity = Self.clientSealIdentity(uid)
        let decision = try context.decision(for: identity)
        return try keys.applying(decision, for: identity).openInPerson(try ReadNeed(identity: identity, blob: blob), reason: reason)
    }

    /// Seals a client's item as the CLI seals a gated item (GatedBlob: the class public key with the
    /// gatekeeper's seal on it, and the gate public keys the gatekeeper derives for `access` and
    /// this identity), so reading it needs the person. Throws interaction-not-allowed when the
    /// keychain is locked, and never prompts: a keychain whose class keys were never sealed says
    /// to run `keygate unlock` once.
    package func sealGatedForClient(_ secret: SecureBytes, uid: [UInt8], access: AccessControl) throws -> [UInt8] {
        var attributes = ItemAttributes(identity: Self.clientSealIdentity(uid))
        attributes.accessControl = access
        attributes.accessibility = .whenUnlocked
        return try keys.sealGatedNow(secret, attributes)
    }

    /// The access an item a Secret Service client makes with `attributes` gets: what the policy's
    /// [secret-service] sections give (PolicySet.secretServiceDecision), nil (none) by default,
    /// as every provider gives. Read from the files now: the daemon outlives policy edits.
    package func secretServiceAccess(_ attributes: [String: String]) throws -> AccessControl? {
        try PolicySet.load(home: context.home, uid: context.uid, environment: context.environment)
            .secretServiceDecision(attributes: attributes).access
    }

    /// A gated client item's label, sealed with the when-unlocked class key to its own bytes `uid`
    /// (an identity of its own, apart from the secret's), so the database file holds no plaintext
    /// of it and a listing shows it while the keychain is unlocked, with no prompt.
    package func sealClientLabel(_ label: String, uid: [UInt8]) throws -> [UInt8] {
        var bytes = Array(label.utf8)
        return try sealForClient(try SecureBytes(consuming: &bytes), identity: Self.clientLabelIdentity(uid))
    }

    /// What `sealClientLabel` sealed; throws interaction-not-allowed when the keychain is locked.
    package func openClientLabel(_ sealed: [UInt8], uid: [UInt8]) throws -> String {
        let opened = try openForClient(sealed, identity: Self.clientLabelIdentity(uid))
        return opened.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The label of Keygate's own item as its `Label` shows it: a gated item's sealed label opened
    /// with the cached keys (nil while the keychain is locked: never a prompt), else its stored one.
    package func shownLabel(of attributes: ItemAttributes) -> String? {
        guard attributes.sealedLabel != nil else { return ItemAttributeCodec.label(for: attributes) }
        return labels.opened(attributes).label
    }

    static func clientLabelIdentity(_ uid: [UInt8]) -> ItemIdentity {
        let secret = clientSealIdentity(uid)
        return .generic(service: "org.freedesktop.secrets.label", account: secret.account)
    }

    /// The identity a Secret Service client's item is sealed to: its 16 random bytes, as hex.
    package static func clientSealIdentity(_ uid: [UInt8]) -> ItemIdentity {
        // Written into one buffer: an array per byte (`hex += [high, low]`) was a third of
        // opening a client's item, which the daemon does on every GetSecret.
        let account = String(unsafeUninitializedCapacity: uid.count * 2) { out in
            var index = 0
            for byte in uid {
                out[index] = hexDigit(byte >> 4)
                out[index + 1] = hexDigit(byte & 15)
                index += 2
            }
            return index
        }
        return .generic(service: "org.freedesktop.secrets", account: account)
    }

    /// The lower-case hex digit of `nibble` (0-15).
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// The items keygate-secret-service's clients keep in the keychain's `login` collection
    /// whose attributes include every one of `attributes`, opened as the CLI opens any item (its
    /// class key: an unlock asks for the password); an item that needs a person is left out.
    func clientItems(_ store: EmbeddedStore, matching attributes: [String: String]) throws -> [ForeignItem] {
        guard try store.hasSecretServiceTables() else { return [] }
        let rows = try store.foreignItems(collection: "login", matching: attributes, loadBlobs: true)
            .filter { !Self.needsPerson($0.blob ?? []) }
        guard !rows.isEmpty else { return [] }
        let unlocked = try keys.classKey(for: .whenUnlocked, createIfNeeded: false)
        try settle(unlocked.owed, by: keys)
        let classKey = unlocked.value
        return try rows.map { row in
            ForeignItem(attributes: row.attributes, label: row.label,
                        secret: try SealedBlob.open(row.blob ?? [], identity: Self.clientSealIdentity(row.uid), classKey: classKey))
        }
    }
}
