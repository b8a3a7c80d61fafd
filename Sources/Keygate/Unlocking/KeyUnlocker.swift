// Finds the keys the user's own processes may hold: the master key and the class keys
// derived from it, from the kernel-keyring cache or by an unlock. Every authentication
// goes through keygate-gatekeeper (GateAccess), root's PAM conversation whose prompts
// this process shows; the password typed there opens the master key, which is then
// cached for the policy's lock-after time. Gate keys (presence, current set, device)
// are never here: a read gets its item's shares from the gatekeeper (ReadUnlock).
//
// The unlocker is the one part of the library that talks to the key store, the kernel
// keyring's cache and the gatekeeper: it builds each once and the operations ask it.
//
// A keychain with only a host protector (a service account) has no password to ask
// for: a locked one fails at once with interaction-not-allowed.
//
// Its other files: ReadUnlock (what a read needs), FingerReopen, KeyUnlocker+Authentication
// (the prompt, its reason, the audit lines), KeyUnlocker+State (status, validate). Delegates
// the gatekeeper to GateAccess, protectors to Keys/, the cache to KeyringCache/, key
// derivation to Crypto/, password changes to PasswordChange, the 1.x migration (which the
// password unlock runs) to LegacyGateMigration.
internal import KeygateGateWire

struct KeyUnlocker: Sendable {
    static let masterName = CacheName.master.text
    static let afterFirstUnlockName = CacheName.afterFirstUnlock.text

    let context: KeychainContext
    let prompter: any Prompter
    let reason: String?
    let authContext: AuthenticationContext?
    /// A policy's allow-non-interactive: use keys already held, never prompt.
    let neverPrompt: Bool
    /// The item this unlocker works for, named in its audit lines and prompt (never its secret).
    let item: ItemIdentity?
    /// The keychain's items, for the 1.x migration an unlock may run (nil in the PAM module).
    var itemStore: (any ItemStore)?
    /// The keychain's protectors and public keys on disk, the kernel keyring's cache of its
    /// unlocked keys, and the gatekeeper: built once, here, and asked by nothing but this unlocker.
    let keyStore: KeyStore
    let cache: KeyCache
    let gate: GateAccess

    init(context: KeychainContext, prompter: any Prompter, reason: String?, authContext: AuthenticationContext?,
         neverPrompt: Bool = false, item: ItemIdentity? = nil, itemStore: (any ItemStore)? = nil) {
        self.context = context
        self.prompter = prompter
        self.reason = reason
        self.authContext = authContext
        self.neverPrompt = neverPrompt
        self.item = item
        self.itemStore = itemStore
        keyStore = KeyStore(directory: context.dataDirectory)
        cache = KeyCache(uid: context.uid)
        gate = GateAccess(prompter: prompter, authContext: authContext, environment: context.environment) { event, service, detail in
            Self.audit(event, service: service, detail: detail.isEmpty ? nil : detail, context: context, item: item,
                       reason: authContext?.localizedReason ?? reason)
        }
    }

    /// This unlocker under one item's policy: its windows, services, tries and prompt.
    func applying(_ decision: PolicyDecision, for identity: ItemIdentity) -> KeyUnlocker {
        KeyUnlocker(context: context.with(policy: decision.policy), prompter: prompter, reason: decision.prompt ?? reason,
                    authContext: authContext, neverPrompt: decision.allowNonInteractive, item: identity, itemStore: itemStore)
    }

    // MARK: Class keys

    /// The symmetric key that seals and opens plain items of this class (scheme 1).
    func classKey(for accessibility: Accessibility, createIfNeeded: Bool) throws -> SecureBytes {
        if accessibility.survivesLock, let cached = cache.load(Self.afterFirstUnlockName) {
            return cached.key
        }
        let master = try masterKey(createIfNeeded: createIfNeeded)
        return try ClassKeys.derive(masterKey: master, for: accessibility)
    }

    /// The class key pair of gated and this-device-only items (scheme 2).
    func classKeyPair(for accessibility: Accessibility) throws -> BoxKeyPair {
        if let pair = afterFirstUnlockPair(accessibility) { return pair }
        return try ClassKeys.keyPair(masterKey: masterKey(createIfNeeded: false), for: accessibility)
    }

    /// An after-first-unlock class's pair, cached with no timeout (LoginKeys.cacheUnlocked).
    private func afterFirstUnlockPair(_ accessibility: Accessibility) -> BoxKeyPair? {
        guard accessibility.survivesLock, let cached = cache.load(CacheName.classPair(accessibility).text) else { return nil }
        return try? BoxKeyPair(privateKey: cached.key)
    }

    /// The class key pair from what the kernel keyring holds now, or nil: never prompts. Its
    /// public half may come from the keyring's `classpub.*` entry, kept beside the master key for
    /// no longer than it; the caller checks it against the blob's class key id and opens the class
    /// box with it (a stale or wrong one opens nothing, and the full derivation, `classKeyPair`,
    /// which never reads `classpub.*`, decides).
    func cachedClassKeyPair(for accessibility: Accessibility) -> BoxKeyPair? {
        if let pair = afterFirstUnlockPair(accessibility) { return pair }
        guard let master = cache.load(Self.masterName) else { return nil }
        let name = CacheName.classPublicKey(accessibility).text
        if let known = cache.load(name),
           let pair = try? ClassKeys.keyPair(masterKey: master.key, for: accessibility, knownPublicKey: known.key.unprotectedCopy()) {
            return pair
        }
        guard let pair = try? ClassKeys.keyPair(masterKey: master.key, for: accessibility) else { return nil }
        // Best effort, and only while the master key is: a full keyring quota costs the next read an X25519.
        var publicBytes = pair.publicKey
        if let expires = master.expiresAt, expires > KeyCache.now(), let publicKey = try? SecureBytes(consuming: &publicBytes) {
            try? cache.store(name, key: publicKey, timeout: UInt32(clamping: expires - KeyCache.now()))
        }
        return pair
    }

    /// The class public key new items of `accessibility` are sealed to, with the gatekeeper's
    /// seal on it. Without one (a new or upgraded keychain), the keychain is unlocked through
    /// the gatekeeper once, which records both.
    func sealedClassKey(for accessibility: Accessibility) throws -> GateRequest.ClassKey {
        if let keys = try PublicKeys.load(directory: context.dataDirectory), let key = keys.classKey(accessibility) {
            let seal = keys.seal(accessibility)
            if !seal.isEmpty { return GateRequest.ClassKey(accessibility: accessibility, publicKey: key, seal: seal) }
        }
        if keyStore.isInitialized {
            try unlock()
        } else {
            _ = try masterKey(createIfNeeded: true)
        }
        guard let keys = try PublicKeys.load(directory: context.dataDirectory), let key = keys.classKey(accessibility),
              !keys.seal(accessibility).isEmpty else {
            throw KeychainError.notAvailable("""
                the keychain's public keys could not be recorded in \(context.dataDirectory): check that the folder is writable, \
                then run `keygate unlock`
                """)
        }
        return GateRequest.ClassKey(accessibility: accessibility, publicKey: key, seal: keys.seal(accessibility))
    }

    /// Seals to public keys only: the class key recorded in keys.json (with the gatekeeper's
    /// seal on it) and the item's own gate keys, which the gatekeeper derives for its identity
    /// and flags. Once the keychain's class keys are sealed, adding never prompts.
    func sealGated(_ secret: SecureBytes, _ attributes: ItemAttributes) throws -> [UInt8] {
        let flags = attributes.accessControl?.rawValue ?? 0
        let classKey = try sealedClassKey(for: attributes.accessibility)
        let gates = try gate.recipients(for: attributes.identity, accessControl: flags, classKey: classKey)
        return try GatedBlob.seal(secret, identity: attributes.identity, accessibility: attributes.accessibility,
                                  accessControl: flags, classKey: classKey.publicKey,
                                  gates: gates, combination: attributes.accessControl?.requiresAll == false ? .any : .all)
    }

    // MARK: The master key

    /// The master key, from the cache or by an unlock (which may initialise the keychain).
    func masterKey(createIfNeeded: Bool) throws -> SecureBytes {
        if let cached = cache.load(Self.masterName) { return cached.key }
        if let reopened = try openWithFinger() { return reopened }
        if !keyStore.isInitialized {
            guard createIfNeeded else {
                throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
            }
            let created = try initialize()
            showRecoveryKeyOnce(created.recoveryKey)
            return created.masterKey
        }
        return try unlock()
    }

    /// Authenticates through the gatekeeper and opens everything the password protects.
    @discardableResult
    func unlock() throws -> SecureBytes {
        do {
            return try unlockWithPassword().unlocked.masterKey
        } catch let stale as StaleLoginProtector {
            throw stale.underlying
        }
    }

    /// PAM accepted the password but the login protector did not open with it.
    struct StaleLoginProtector: Error {
        let underlying: KeychainError
    }

    /// Opens the login protector with a password the gatekeeper's PAM conversation just took:
    /// caches the master key, seals the class keys, and migrates a 1.x keychain.
    @discardableResult
    func open(with password: SecureBytes) throws -> PasswordUnlock {
        try openMovingLegacyItems(with: password).unlocked
    }

    /// `open(with:)`, and the blobs the 1.x migration it ran sealed again, by item (none for a
    /// keychain that has nothing of 1.x's left).
    private func openMovingLegacyItems(with password: SecureBytes) throws
        -> (unlocked: PasswordUnlock, moved: [ItemIdentity: [UInt8]]) {
        let unlocked: PasswordUnlock
        do {
            unlocked = try keyStore.unlockAll(password: password)
        } catch let error as KeychainError where error.reason == .wrongPassword {
            // PAM accepted this password, yet it does not open the login protector:
            // the password changed without Keygate hearing of it.
            throw StaleLoginProtector(underlying: error)
        }
        cacheUnlocked(unlocked.masterKey)
        // Best effort: a read-only data folder still reads (an add then says what is wrong).
        try? recordSealedClassKeys(unlocked.masterKey)
        armFingerUnlock(unlocked.masterKey)
        guard unlocked.presence != nil || unlocked.currentSet != nil else { return (unlocked, [:]) }
        return (unlocked, try LegacyGateMigration(unlocker: self).run(unlocked))
    }

    private func unlockWithPassword() throws -> (unlocked: PasswordUnlock, moved: [ItemIdentity: [UInt8]]) {
        guard keyStore.isInitialized else {
            throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
        }
        try requirePasswordProtector()
        return try openMovingLegacyItems(with: authenticate(purpose: .unlock))
    }

    /// `unlock()` for a read of an item Keygate 1.x sealed: the blobs its migration sealed again.
    func unlockMovingLegacyItems() throws -> [ItemIdentity: [UInt8]] {
        do {
            return try unlockWithPassword().moved
        } catch let stale as StaleLoginProtector {
            throw stale.underlying
        }
    }

    /// A service account's keychain has no password protector: nothing that needs a password
    /// (an unlock, user presence, current set) can be done for it, and it says so at once.
    func requirePasswordProtector() throws {
        let store = keyStore
        guard !store.hasLoginProtector, store.hasHostProtector else { return }
        throw KeychainError.interactionNotAllowed("""
            the keychain of \(context.userName) has no password protector (only the host protector and the recovery key open \
            it), so nothing that needs a password can be opened: items that need user presence or current-set stay closed (add \
            them with --access none, or give them `default-access = none` in a system policy); after a reboot root opens \
            after-first-unlock items with `keygate unlock --host-protector --user \(context.userName)`
            """)
    }

    /// Opens the keychain with the password typed for a presence check (one prompt for both).
    /// Returns the blobs a 1.x migration sealed again, by item.
    @discardableResult
    func openAfterPresence(_ password: SecureBytes?) throws -> [ItemIdentity: [UInt8]] {
        do {
            return try openMovingLegacyItems(with: Self.requirePassword(password, service: context.policy.pamService)).moved
        } catch let stale as StaleLoginProtector {
            throw stale.underlying
        }
    }

    /// Unlocks with the recovery key instead of the password.
    @discardableResult
    func unlock(recoveryKey: SecureBytes) throws -> SecureBytes {
        let master = try keyStore.unlock(recoveryKey: recoveryKey)
        cacheUnlocked(master)
        return master
    }

    /// Creates the master key, wrapped by the user's login password (checked through
    /// PAM first, so the protector always matches the real login password) and by a
    /// recovery key, which is returned to be shown once.
    func initialize() throws -> (masterKey: SecureBytes, recoveryKey: SecureBytes) {
        let store = keyStore
        if store.isInitialized {
            throw KeychainError.duplicateItem("""
                the keychain is already initialised in \(context.dataDirectory): nothing to do (to start over, remove that folder; \
                items sealed by the old key become unreadable)
                """)
        }
        let password = try authenticate(purpose: .unlock)
        let kdf = try context.kdfForNewProtector()
        let created = try store.initialize(password: password, kdf: kdf)
        cacheUnlocked(created.masterKey)
        try recordSealedClassKeys(created.masterKey)
        return created
    }

    /// Records the class public keys with the gatekeeper's seals. The seals need an
    /// authentication in this scope, which the unlock that called this just made.
    private func recordSealedClassKeys(_ master: SecureBytes) throws {
        let seals = try gate.certify(try GateAccess.classKeys(of: master))
        try keyStore.recordClassKeys(masterKey: master, seals: seals)
    }

    // MARK: Locking

    /// Drops the unlocked keys: the master key and this scope's authentications (like
    /// `sudo -k`), or with `all` every Keygate key of this user and every authentication
    /// the gatekeeper recorded for it (like `sudo -K`).
    @discardableResult
    func lock(all: Bool) -> Int {
        authContext?.invalidate()
        gate.forget(all: all)
        if all {
            try? AtomicFile.remove(fingerUnlockPath)
            let dropped = cache.evictAll()
            audit(.lock, detail: "all scopes, \(dropped) keys dropped")
            return dropped
        }
        let dropped = cache.evict(Self.masterName) ? 1 : 0
        audit(.lock, detail: "\(dropped) keys dropped")
        return dropped
    }

    /// Best effort: a full keyring quota must not stop the read that triggered the
    /// unlock; the next read will simply authenticate again.
    func cacheUnlocked(_ master: SecureBytes) {
        audit(.unlock, detail: "master key held for \(context.policy.lockAfter) s")
        try? LoginKeys.cacheUnlocked(master, in: cache, lockAfter: context.policy.lockAfter)
    }

    /// When a write creates the keychain implicitly, the recovery key still has to be
    /// shown once: it goes to the person through the prompter (terminal or stderr), written
    /// from locked memory.
    private func showRecoveryKeyOnce(_ recoveryKey: SecureBytes) {
        guard let text = try? RecoveryKey.format(recoveryKey) else { return }
        prompter.notify("Keygate created your keychain. Recovery key, shown only this once; keep it somewhere safe:\n  ",
                        secret: text, "\nIt unlocks the keychain if your password is lost (keygate unlock --recovery).")
    }
}

extension GateKind {
    /// The name used in messages.
    var name: String {
        switch self {
        case .accessClass: return "class"
        case .presence: return "presence"
        case .currentSet: return "current-set"
        case .enrolledSet: return "enrolled-set"
        case .device: return "device"
        }
    }
}
