// Finds the keys that open an item: the class key (from the master key), and for
// access-controlled items the gate keys (presence, current set) that only a PAM
// authentication in which the password was typed can unwrap. Everything is looked
// up first in the kernel-keyring cache (and the caller's AuthenticationContext);
// a miss authenticates through PAM once, and the password typed in that
// conversation unwraps the master key and the gate keys together. The master key
// is then cached for the policy's lock-after time, the gate keys for the reuse
// duration in the current reuse scope.
//
// A keychain with only a host protector (a service account) has no password to ask
// for: such a miss fails at once with interaction-not-allowed.
//
// Delegates: PAM to Authentication/, protectors to Keys/, the cache to
// KeyringCache/, key derivation to Crypto/.

struct KeyUnlocker: Sendable {
    static let masterName = LoginKeys.masterName
    static let afterFirstUnlockName = LoginKeys.afterFirstUnlockName

    let context: KeychainContext
    let prompter: any Prompter
    let reason: String?
    let authContext: AuthenticationContext?
    /// A policy's allow-non-interactive: use keys already held, never prompt.
    var neverPrompt = false
    /// The item this unlocker works for, named in its audit lines (never its secret).
    var item: ItemIdentity?

    /// This unlocker under one item's policy: its windows, services, tries and prompt.
    func applying(_ decision: PolicyDecision, for identity: ItemIdentity) -> KeyUnlocker {
        var scoped = KeyUnlocker(context: context.with(policy: decision.policy), prompter: prompter,
                                 reason: decision.prompt ?? reason, authContext: authContext)
        scoped.neverPrompt = decision.allowNonInteractive
        scoped.item = identity
        return scoped
    }

    var keyStore: KeyStore { KeyStore(directory: context.dataDirectory) }
    var cache: KeyCache { KeyCache(uid: context.user.uid) }
    var scope: ReuseScope { ReuseScope.current(context.policy.reuseScope) }

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
        if accessibility.survivesLock, let cached = cache.load(LoginKeys.classPairName(accessibility)),
           let pair = try? BoxKeyPair(privateKey: cached.key) {
            return pair
        }
        let device = accessibility.isThisDeviceOnly ? try deviceKey() : nil
        let master = try masterKey(createIfNeeded: false)
        return try ClassKeys.keyPair(masterKey: master, for: accessibility, deviceKey: device)
    }

    /// This host's device key for the calling user, or a clear error saying how to get one.
    func deviceKey() throws -> SecureBytes {
        guard let key = DeviceKey.forCurrentUser(uid: context.user.uid) else {
            throw KeychainError.notAvailable(DeviceKey.unavailableAdvice(uid: context.user.uid))
        }
        return key
    }

    /// The public keys new items are sealed to; recorded at init and at each unlock.
    /// When the class key of `accessibility` is not recorded yet (a this-device-only
    /// class before the first unlock with a device key), the keychain is unlocked to
    /// record it.
    func publicKeys(for accessibility: Accessibility, needsGates: Bool) throws -> PublicKeys {
        if let loaded = try PublicKeys.load(directory: context.dataDirectory), loaded.classKey(accessibility) != nil {
            // Gated items are sealed to the gate keys login.json holds (repairing a stale copy).
            let keys = needsGates ? try keyStore.syncGatePublicKeys(loaded) : loaded
            if !needsGates || (keys.presenceKey != nil && keys.currentSetKey != nil) { return keys }
        }
        let device = accessibility.isThisDeviceOnly ? try deviceKey() : nil
        let existing = try PublicKeys.load(directory: context.dataDirectory)
        if keyStore.isInitialized, needsGates, existing?.presenceKey == nil || existing?.currentSetKey == nil {
            // A keychain from before gate keys: they are wrapped by the password only,
            // so creating them needs it.
            try unlock()
        }
        // On a new keychain this initialises it, which records every public key.
        let master = try masterKey(createIfNeeded: true)
        try keyStore.recordClassKeys(masterKey: master, deviceKey: device)
        guard let keys = try PublicKeys.load(directory: context.dataDirectory), keys.classKey(accessibility) != nil else {
            throw KeychainError.notAvailable("the keychain's public keys could not be recorded in \(context.dataDirectory): check that the folder is writable")
        }
        return keys
    }

    // MARK: The master key

    /// The master key, from the cache or by an unlock (which may initialise the keychain).
    func masterKey(createIfNeeded: Bool) throws -> SecureBytes {
        if let cached = cache.load(Self.masterName) { return cached.key }
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

    /// Authenticates through PAM and unwraps everything the password protects.
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

    @discardableResult
    private func unlockWithPassword(service: String? = nil, purpose: Purpose = .unlock) throws -> PasswordUnlock {
        let store = keyStore
        guard store.isInitialized else {
            throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
        }
        if !store.hasLoginProtector, store.hasHostProtector {
            // A service account's keychain: no password wraps anything, so PAM cannot help.
            throw KeychainError.interactionNotAllowed("the keychain of \(context.user.name) has no password protector (only the host protector and the recovery key open it), so nothing that needs a password can be opened: items that need user presence or current-set stay closed (give them `access = none` in a system policy, or add them without access control); after a reboot root opens after-first-unlock items with `keygate unlock --host-protector --user \(context.user.name)`")
        }
        let password = try authenticate(service: service ?? context.policy.pamService, purpose: purpose)
        let unlocked: PasswordUnlock
        do {
            unlocked = try store.unlockAll(password: password)
        } catch let error as KeychainError where error.code == .authFailed {
            // PAM accepted this password, yet it does not open the login protector:
            // the password changed without Keygate hearing of it.
            throw StaleLoginProtector(underlying: error)
        }
        if unlocked.presence == nil || unlocked.currentSet == nil {
            try store.ensureGateKeys(password: password, masterKey: unlocked.masterKey)
            let upgraded = try store.unlockAll(password: password)
            cacheUnlocked(upgraded.masterKey)
            return upgraded
        }
        cacheUnlocked(unlocked.masterKey)
        return unlocked
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
            throw KeychainError.duplicateItem("the keychain is already initialised in \(context.dataDirectory): nothing to do (to start over, remove that folder; items sealed by the old key become unreadable)")
        }
        let password = try authenticate(service: context.policy.pamService)
        let kdf = try context.kdfForNewProtector()
        let created = try store.initialize(password: password, kdf: kdf)
        try store.recordClassKeys(masterKey: created.masterKey, deviceKey: DeviceKey.forCurrentUser(uid: context.user.uid))
        cacheUnlocked(created.masterKey)
        return created
    }

    // MARK: Password changes

    /// `keygate passwd`: the password changed without Keygate (chpasswd, a root reset,
    /// another tool). PAM confirms the current password; the previous one opens the
    /// old protector; master and presence keys are re-wrapped for the current
    /// password, and the current-set key is replaced, so current-set items die.
    func changePassword() throws {
        let current = try authenticate(service: context.policy.pamService)
        guard let previous = try prompter.readSecret(prompt: "[keygate] the password Keygate last knew for \(context.user.name) (your previous password): ") else {
            throw KeychainError.userCanceled("canceled: the keychain's password was not changed")
        }
        let store = keyStore
        // Before as well as after: a passwd killed once the new current-set pair is written
        // must not leave the old private half cached for the reuse window.
        dropGateKeysEverywhere()
        try store.changePassword(old: previous, new: current, kdf: nil)
        dropGateKeysEverywhere()
        let unlocked = try store.unlockAll(password: current)
        cacheUnlocked(unlocked.masterKey)
    }

    /// `keygate passwd --recovery`: the previous password is lost. The recovery key
    /// opens the master key; the presence and current-set keys cannot be carried
    /// over without the old password, so both are replaced.
    func resetPassword(recoveryKey: SecureBytes) throws -> String {
        let current = try authenticate(service: context.policy.pamService)
        let store = keyStore
        let master = try store.unlock(recoveryKey: recoveryKey)
        let note = try store.resetPassword(masterKey: master, new: current, kdf: nil)
        dropGateKeysEverywhere()
        cacheUnlocked(master)
        return note
    }

    /// Gate keys cached in any scope belong to the old key pairs after a change.
    private func dropGateKeysEverywhere() {
        for entry in cache.entries() where entry.name.hasPrefix("presence.") || entry.name.hasPrefix("current-set.") {
            cache.evict(entry.name)
        }
        authContext?.invalidate()
    }

    // MARK: Gate keys

    /// The gate key pairs for these constraints: from the caller's context or this
    /// scope's cache, else through one PAM authentication via the constraint's service.
    func gateKeys(for constraints: [AccessControl.Constraint]) throws -> [BoxKeyPair] {
        let kinds = Self.gateKinds(constraints)
        var found: [BoxKeyPair] = []
        var missing: [GateKind] = []
        for kind in kinds {
            if let pair = cachedGate(kind) { found.append(pair) } else { missing.append(kind) }
        }
        if missing.isEmpty { return found }
        if authContext?.interactionNotAllowed == true {
            throw KeychainError.interactionNotAllowed("reading this item needs your password, and the authentication context does not allow a prompt")
        }
        let unlocked: PasswordUnlock
        do {
            unlocked = try unlockWithPassword(service: pamService(for: constraints), purpose: .useItem)
        } catch let stale as StaleLoginProtector {
            if missing == [.currentSet] {
                throw KeychainError.itemNotFound("this item was invalidated: it was bound to your previous password (current-set), and the password has changed since")
            }
            throw stale.underlying
        }
        for kind in missing {
            guard let pair = kind == .presence ? unlocked.presence : unlocked.currentSet else {
                throw KeychainError.decode("the keychain has no \(kind.name) key after unlocking: run `keygate passwd` to repair it")
            }
            cacheGate(kind, pair)
            found.append(pair)
        }
        return found
    }

    /// Presence for userPresence, devicePasscode and biometryAny; current set for biometryCurrentSet.
    static func gateKinds(_ constraints: [AccessControl.Constraint]) -> [GateKind] {
        var kinds: [GateKind] = []
        for c in constraints {
            let kind: GateKind = c == .biometryCurrentSet ? .currentSet : .presence
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }

    /// The PAM service that authenticates these constraints.
    func pamService(for constraints: [AccessControl.Constraint]) -> String {
        switch constraints.first {
        case .devicePasscode: return context.policy.passcodePamService
        case .biometryAny: return context.policy.biometryPamService
        default: return context.policy.pamService
        }
    }

    func gateCacheName(_ kind: GateKind) -> String { "\(kind.name).\(scope.id)" }

    private func cachedGate(_ kind: GateKind) -> BoxKeyPair? {
        if let pair = authContext?.key(kind.name) { return pair }
        guard context.policy.reuseDuration > 0, let cached = cache.load(gateCacheName(kind)) else { return nil }
        return try? BoxKeyPair(privateKey: cached.key)
    }

    private func cacheGate(_ kind: GateKind, _ pair: BoxKeyPair) {
        authContext?.remember(kind.name, pair)
        guard context.policy.reuseDuration > 0 else { return }
        try? cache.store(gateCacheName(kind), key: pair.privateKey, timeout: context.policy.reuseDuration)
    }

    // MARK: Locking

    /// Drops the unlocked keys: the master key and this scope's gate keys (like
    /// `sudo -k`), or with `all` every Keygate key of this user (like `sudo -K`).
    @discardableResult
    func lock(all: Bool) -> Int {
        authContext?.invalidate()
        if all {
            let dropped = cache.evictAll()
            audit(.lock, detail: "all scopes, \(dropped) keys dropped")
            return dropped
        }
        var dropped = cache.evict(Self.masterName) ? 1 : 0
        for kind in [GateKind.presence, .currentSet] where cache.evict(gateCacheName(kind)) { dropped += 1 }
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
        let name = item.itemClass == .genericPassword ? item.service : item.server
        return "keygate wants to use your confidential information stored in \"\(name)\" in your keychain."
    }

    /// One PAM authentication, with sudo's three tries and the lockout after
    /// repeated failures. Returns the password typed in the successful attempt.
    private func authenticate(service: String, purpose: Purpose = .unlock) throws -> SecureBytes {
        if authContext?.interactionNotAllowed == true {
            throw KeychainError.interactionNotAllowed("this needs your password, and the authentication context does not allow a prompt")
        }
        if neverPrompt {
            audit(.policyRefusal, service: service, detail: "allow-non-interactive: no prompt")
            throw KeychainError.interactionNotAllowed("the policy for this item allows no prompt (allow-non-interactive): unlock first (keygate unlock), or see `keygate policy explain`")
        }
        try prompter.ensureAvailable()
        let failures = FailureCounter(directory: context.dataDirectory, threshold: context.policy.lockoutThreshold,
                                      lockoutSeconds: context.policy.lockoutSeconds)
        let pam = PAMAuthenticator(service: service, user: context.user.name, confdir: context.pamConfdir)
        do { try failures.checkNotLockedOut() } catch {
            audit(.lockout, service: service, detail: "refused: locked out after repeated failures")
            throw error
        }
        let password = try pam.authenticate(
            prompter: prompter, reason: promptReason(for: purpose),
            maxTries: context.policy.maxTries,
            afterFailedAttempt: {
                failures.recordFailure()
                audit(.authFailure, service: service, detail: "incorrect password")
                do { try failures.checkNotLockedOut() } catch {
                    audit(.lockout, service: service, detail: "lockout started")
                    throw error
                }
            })
        failures.recordSuccess()
        audit(.authSuccess, service: service)
        guard password.count > 0 else {
            // pam_permit, a fingerprint or a smart card let the user in, but the keys
            // are wrapped by the password: there is nothing to unwrap them with.
            throw KeychainError.authFailed("PAM service '\(service)' accepted you without a typed password, but the keychain opens only with your password: make that service ask for it (see pam.d/keygate)")
        }
        return password
    }

    /// Best effort: a full keyring quota must not stop the read that triggered the
    /// unlock; the next read will simply authenticate again.
    private func cacheUnlocked(_ master: SecureBytes) {
        audit(.unlock, detail: "master key held for \(context.policy.lockAfter) s")
        try? LoginKeys.cacheUnlocked(master, in: cache, lockAfter: context.policy.lockAfter)
        if let device = DeviceKey.forCurrentUser(uid: context.user.uid) {
            try? LoginKeys.cacheThisDeviceOnly(master, deviceKey: device, store: keyStore, in: cache)
        }
    }

    /// One audit line (Audit/AuditLog.swift) about this user, in this scope.
    private func audit(_ event: AuditEvent, service: String? = nil, detail: String? = nil) {
        let itemService = item.map { $0.itemClass == .genericPassword ? $0.service : $0.server }
        AuditLog.record(AuditRecord(event: event, user: context.user.name, pamService: service, itemService: itemService,
                                    account: item?.account, scope: scope.id,
                                    reason: authContext?.localizedReason ?? reason, detail: detail))
    }

    /// When a write creates the keychain implicitly, the recovery key still has to be
    /// shown once: it goes to the person through the prompter (terminal or stderr).
    private func showRecoveryKeyOnce(_ recoveryKey: SecureBytes) {
        guard let text = try? RecoveryKey.format(recoveryKey) else { return }
        let shown = text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        prompter.notify("Keygate created your keychain. Recovery key, shown only this once; keep it somewhere safe:\n  \(shown)\nIt unlocks the keychain if your password is lost (keygate unlock --recovery).")
    }
}

extension GateKind {
    /// The name used in cache entries and messages.
    var name: String {
        switch self {
        case .accessClass: return "class"
        case .presence: return "presence"
        case .currentSet: return "current-set"
        case .device: return "device"
        }
    }
}
