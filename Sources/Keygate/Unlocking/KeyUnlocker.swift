// Finds the keys the user's own processes may hold: the master key and the class keys
// derived from it, from the kernel-keyring cache or by an unlock. Every authentication
// goes through keygate-gatekeeper (GateAccess), root's PAM conversation whose prompts
// this process shows; the password typed there opens the master key, which is then
// cached for the policy's lock-after time. Gate keys (presence, current set, device)
// are never here: reads get their item's shares from the gatekeeper (KeychainOperations).
//
// A keychain with only a host protector (a service account) has no password to ask
// for: a locked one fails at once with interaction-not-allowed.
//
// Delegates: the gatekeeper to GateAccess, protectors to Keys/, the cache to
// KeyringCache/, key derivation to Crypto/, password changes to PasswordChange, the
// 1.x migration to LegacyGateMigration.
internal import KeygateGateWire

struct KeyUnlocker: Sendable {
    static let masterName = CacheName.master.text
    static let afterFirstUnlockName = CacheName.afterFirstUnlock.text

    let context: KeychainContext
    let prompter: any Prompter
    let reason: String?
    let authContext: AuthenticationContext?
    /// A policy's allow-non-interactive: use keys already held, never prompt.
    var neverPrompt = false
    /// The item this unlocker works for, named in its audit lines and prompt (never its secret).
    var item: ItemIdentity?
    /// The keychain's items, for the 1.x migration an unlock may run (nil in the PAM module).
    var itemStore: (any ItemStore)?

    /// This unlocker under one item's policy: its windows, services, tries and prompt.
    func applying(_ decision: PolicyDecision, for identity: ItemIdentity) -> KeyUnlocker {
        var scoped = KeyUnlocker(context: context.with(policy: decision.policy), prompter: prompter,
                                 reason: decision.prompt ?? reason, authContext: authContext)
        scoped.neverPrompt = decision.allowNonInteractive
        scoped.item = identity
        scoped.itemStore = itemStore
        return scoped
    }

    var keyStore: KeyStore { KeyStore(directory: context.dataDirectory) }
    var cache: KeyCache { KeyCache(uid: context.uid) }
    var gate: GateAccess {
        let unlocker = self
        return GateAccess(prompter: prompter, authContext: authContext, environment: context.environment) { event, service, detail in
            unlocker.audit(event, service: service, detail: detail.isEmpty ? nil : detail)
        }
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
            return try unlockWithPassword().masterKey
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
        if unlocked.presence != nil || unlocked.currentSet != nil {
            try LegacyGateMigration(unlocker: self).run(unlocked)
        }
        return unlocked
    }

    @discardableResult
    private func unlockWithPassword() throws -> PasswordUnlock {
        guard keyStore.isInitialized else {
            throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
        }
        try requirePasswordProtector()
        return try open(with: authenticate(purpose: .unlock))
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
    func openAfterPresence(_ password: SecureBytes?) throws {
        do {
            try open(with: Self.requirePassword(password, service: context.policy.pamService))
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

    /// LAContext.evaluatePolicy: one presence check now, whose handle serves later reads; with
    /// `biometric`, a finger (the handle then serves biometric items).
    func evaluatePresence(biometric: Bool = false) throws {
        _ = try gate.authenticate(reason: promptReason(for: .useItem), biometric: biometric)
    }

    // MARK: A finger reopens the keychain

    /// The master key sealed to the gatekeeper's finger-unlock key (FingerUnlockKey): the user's
    /// file, useless without root's key.
    var fingerUnlockPath: String { context.dataDirectory + "/finger-unlock" }

    /// After a password unlock: seals the master key to a new key of the gatekeeper's, so that a
    /// finger may reopen the keychain within the policy's window. Best effort: without it the
    /// password is asked, as before. A host without fprintd's storage folder is not asked.
    func armFingerUnlock(_ master: SecureBytes) {
        guard AtomicFile.exists(FprintdProbe.storageRoot(context.environment)), let publicKey = try? gate.armFingerUnlock() else { return }
        guard publicKey.count == BoxKeyPair.publicKeyBytes, let sealed = try? SealedBox.seal(master, to: publicKey) else {
            try? AtomicFile.remove(fingerUnlockPath)   // turned off: no finger enrolled, or the policy's finger-unlock = 0
            return
        }
        try? AtomicFile.write(sealed, to: fingerUnlockPath, mode: 0o600)
    }

    /// The master key reopened by a finger (the gatekeeper decides: its window, the password's
    /// generation, the lockout, the match), cached as an unlock's; nil when the finger cannot
    /// reopen it now (then the password is asked, after a word when a finger was refused). The
    /// key is checked against keys.json's class public key before it is used.
    func openWithFinger() throws -> SecureBytes? {
        guard !neverPrompt, authContext?.interactionNotAllowed != true, keyStore.hasLoginProtector,
              let sealed = try? AtomicFile.read(fingerUnlockPath, maxBytes: 256), sealed.count == GateRequest.sealedMasterKeyBytes
        else { return nil }
        do {
            let master = try gate.fingerUnlock(sealed, reason: promptReason(for: .unlock))
            guard let keys = try PublicKeys.load(directory: context.dataDirectory),
                  let recorded = keys.classKey(.whenUnlocked),
                  try ClassKeys.keyPair(masterKey: master, for: .whenUnlocked).publicKey == recorded else {
                try? AtomicFile.remove(fingerUnlockPath)
                return nil
            }
            cacheUnlocked(master)
            return master
        } catch let error as KeychainError where error.code == .userCanceled {
            throw error
        } catch let error as KeychainError {
            switch error.code {
            case .authFailed: prompter.notify("The finger did not reopen the keychain: use your password instead.")
            case .itemNotFound:
                // Root keeps nothing that opens it any more: said once, then the copy goes.
                try? AtomicFile.remove(fingerUnlockPath)
                prompter.notify(error.message.prefix(1).uppercased() + error.message.dropFirst() + ".")
            default: break
            }
            return nil
        }
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

    // MARK: Authentication

    /// What an authentication is for, which the prompt says when no reason was given.
    enum Purpose {
        /// Opening the keychain (the master key).
        case unlock
        /// A user-presence or current-set check for reading one item.
        case useItem
    }

    /// The reason shown above the password prompt: the caller's (LAContext's localizedReason,
    /// kSecUseOperationPrompt, the policy's prompt, the command's), else what the check is for,
    /// in the words a Mac uses for an item ("keygate wants to use your confidential information
    /// stored in "vpn" in your keychain.").
    func promptReason(for purpose: Purpose) -> String {
        if let given = authContext?.localizedReason ?? reason { return given }
        guard purpose == .useItem, let item else { return "unlock the keychain" }
        // The item's service (server), else its account; an item with neither is not named
        // (never `stored in ""`).
        let name = [item.itemClass == .genericPassword ? item.service : item.server, item.account].first { !$0.isEmpty }
        guard let name else { return "keygate wants to use your confidential information stored in your keychain." }
        return "keygate wants to use your confidential information stored in \"\(name)\" in your keychain."
    }

    /// One authentication through the gatekeeper (root's tries, failure counter and lockout).
    /// Returns the password typed in the successful attempt.
    func authenticate(purpose: Purpose) throws -> SecureBytes {
        if authContext?.interactionNotAllowed == true {
            throw KeychainError.interactionNotAllowed("this needs your password, and the authentication context does not allow a prompt")
        }
        if neverPrompt {
            audit(.policyRefusal, service: context.policy.pamService, detail: "allow-non-interactive: no prompt")
            throw KeychainError.interactionNotAllowed("""
                the policy for this item allows no prompt (allow-non-interactive): unlock first (keygate unlock), or see `keygate \
                policy explain`
                """)
        }
        try prompter.ensureAvailable()
        return try Self.requirePassword(gate.authenticate(reason: promptReason(for: purpose)).password, service: context.policy.pamService)
    }

    /// The keys are wrapped by the password: a stack that let the person in without one
    /// (pam_permit, a fingerprint, a smart card) leaves nothing to open them with.
    static func requirePassword(_ password: SecureBytes?, service: String) throws -> SecureBytes {
        guard let password, password.count > 0 else {
            throw KeychainError.authFailed("""
                PAM service '\(service)' accepted you without a typed password, but the keychain opens only with your password: \
                make that service ask for it (see pam.d/keygate)
                """)
        }
        return password
    }

    /// Best effort: a full keyring quota must not stop the read that triggered the
    /// unlock; the next read will simply authenticate again.
    func cacheUnlocked(_ master: SecureBytes) {
        audit(.unlock, detail: "master key held for \(context.policy.lockAfter) s")
        try? LoginKeys.cacheUnlocked(master, in: cache, lockAfter: context.policy.lockAfter)
    }

    /// One audit line (Audit/AuditLog.swift) about this user.
    func audit(_ event: AuditEvent, service: String? = nil, detail: String? = nil) {
        let itemService = item.map { $0.itemClass == .genericPassword ? $0.service : $0.server }
        AuditLog.record(AuditRecord(event: event, user: context.userName, pamService: service, itemService: itemService,
                                    account: item?.account, scope: ReuseScope.current(context.policy.reuseScope).id,
                                    reason: authContext?.localizedReason ?? reason, detail: detail))
    }

    /// When a write creates the keychain implicitly, the recovery key still has to be
    /// shown once: it goes to the person through the prompter (terminal or stderr).
    private func showRecoveryKeyOnce(_ recoveryKey: SecureBytes) {
        guard let text = try? RecoveryKey.format(recoveryKey) else { return }
        let shown = text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        prompter.notify("""
            Keygate created your keychain. Recovery key, shown only this once; keep it somewhere safe:\n  \(shown)\nIt unlocks \
            the keychain if your password is lost (keygate unlock --recovery).
            """)
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
