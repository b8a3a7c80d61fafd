// Finds the key that opens an item's class: first in the kernel-keyring cache,
// else by authenticating the user through PAM and unwrapping the master key with
// the password typed in that conversation. After an unlock, the master key is
// cached for the policy's lock-after time and the after-first-unlock class key
// until the user's keys are dropped.
//
// Delegates: PAM to Authentication/, protectors to Keys/, the cache to
// KeyringCache/, key derivation to Crypto/.

struct KeyUnlocker: Sendable {
    static let masterName = LoginKeys.masterName
    static let afterFirstUnlockName = LoginKeys.afterFirstUnlockName

    let context: KeychainContext
    let prompter: any Prompter
    let reason: String?

    var keyStore: KeyStore { KeyStore(directory: context.dataDirectory) }
    var cache: KeyCache { KeyCache(uid: context.user.uid) }

    /// The key that seals and opens items of this accessibility class.
    func classKey(for accessibility: Accessibility, createIfNeeded: Bool) throws -> SecureBytes {
        if accessibility.isThisDeviceOnly {
            throw KeychainError.param("the \(accessibility.rawValue) class needs this host's device key, which this build of Keygate does not provide yet: use when-unlocked or after-first-unlock")
        }
        if accessibility.survivesLock, let cached = cache.load(Self.afterFirstUnlockName) {
            return cached.key
        }
        let master = try masterKey(createIfNeeded: createIfNeeded)
        return try ClassKeys.derive(masterKey: master, for: accessibility)
    }

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

    /// Authenticates through PAM and unwraps the master key with the typed password.
    @discardableResult
    func unlock() throws -> SecureBytes {
        let store = keyStore
        guard store.isInitialized else {
            throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
        }
        let password = try authenticate()
        let master = try store.unlock(password: password)
        cacheUnlocked(master)
        return master
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
        let password = try authenticate()
        let kdf = try context.kdfForNewProtector()
        let created = try store.initialize(password: password, kdf: kdf)
        cacheUnlocked(created.masterKey)
        return created
    }

    /// Drops the unlocked keys: the master key (like `sudo -k`), or with `all`
    /// every Keygate key of this user, after-first-unlock included (like `sudo -K`).
    @discardableResult
    func lock(all: Bool) -> Int {
        if all { return cache.evictAll() }
        return cache.evict(Self.masterName) ? 1 : 0
    }

    /// When a write creates the keychain implicitly, the recovery key still has to be
    /// shown once: it goes to the person through the prompter (terminal or stderr).
    private func showRecoveryKeyOnce(_ recoveryKey: SecureBytes) {
        guard let text = try? RecoveryKey.format(recoveryKey) else { return }
        let shown = text.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        prompter.notify("Keygate created your keychain. Recovery key, shown only this once; keep it somewhere safe:\n  \(shown)\nIt unlocks the keychain if your password is lost (keygate unlock --recovery).")
    }

    private func authenticate() throws -> SecureBytes {
        try prompter.ensureAvailable()
        let pam = PAMAuthenticator(service: context.policy.pamService, user: context.user.name,
                                   confdir: context.pamConfdir)
        let password = try pam.authenticate(prompter: prompter, reason: reason ?? "unlock the keychain",
                                            maxTries: context.policy.maxTries)
        guard password.count > 0 else {
            // pam_permit, a fingerprint or a smart card let the user in, but the
            // master key is wrapped by the password: there is nothing to unwrap it with.
            throw KeychainError.authFailed("PAM service '\(context.policy.pamService)' accepted you without a typed password, but the keychain opens only with your password: make that service ask for it (see pam.d/keygate)")
        }
        return password
    }

    /// Best effort: a full keyring quota must not stop the read that triggered the
    /// unlock; the next read will simply authenticate again.
    private func cacheUnlocked(_ master: SecureBytes) {
        try? LoginKeys.cacheUnlocked(master, in: cache, lockAfter: context.policy.lockAfter)
    }
}
