// The keys a user's own processes may hold, and where each is kept: the keychain's protectors
// and public keys on disk (KeyStore), the kernel keyring's cache of the unlocked keys
// (KeyCache), and the master key sealed for a finger's reopening (`finger-unlock`, useless
// without root's key). It never prompts and never asks the gatekeeper, so a long-running
// process (a Secret Service daemon) can hold one and ask it for what is cached, and hand the
// password its own prompt took to `open(password:)` (what needs no wire type is `package` for
// that). Delegates protectors to Keys/, the cache
// to KeyringCache/, key derivation to Crypto/, what a login caches to LoginKeys.
internal import KeygateGateWire

package struct KeySource: Sendable {
    package static let masterName = CacheName.master.text
    package static let afterFirstUnlockName = CacheName.afterFirstUnlock.text

    package let dataDirectory: String
    /// How long an unlocked master key is held (the keychain policy's lock-after).
    package let lockAfter: UInt32
    let store: KeyStore
    let cache: KeyCache

    package init(dataDirectory: String, uid: UInt32, lockAfter: UInt32) {
        self.dataDirectory = dataDirectory
        self.lockAfter = lockAfter
        store = KeyStore(directory: dataDirectory)
        cache = KeyCache(uid: uid)
    }

    package var isInitialized: Bool { store.isInitialized }
    package var hasLoginProtector: Bool { store.hasLoginProtector }
    package var hasHostProtector: Bool { store.hasHostProtector }
    package var hasLegacyGateKeys: Bool { store.hasLegacyGateKeys }

    // MARK: What is held now (no prompt)

    /// The master key, while the kernel keyring holds it.
    package var cachedMaster: SecureBytes? { cache.load(Self.masterName)?.key }

    /// The master key's cache entry (its expiry), while held.
    package var cachedMasterEntry: (key: SecureBytes, expiresAt: UInt64?)? {
        cache.load(Self.masterName).map { ($0.key, $0.expiresAt) }
    }

    /// The symmetric key of an after-first-unlock class, cached with no timeout.
    package func cachedClassKey(for accessibility: Accessibility) -> SecureBytes? {
        guard accessibility.survivesLock else { return nil }
        return cache.load(Self.afterFirstUnlockName)?.key
    }

    /// An after-first-unlock class's pair, cached with no timeout (LoginKeys.cacheUnlocked).
    package func afterFirstUnlockPair(_ accessibility: Accessibility) -> BoxKeyPair? {
        guard accessibility.survivesLock, let cached = cache.load(CacheName.classPair(accessibility).text) else { return nil }
        do { return try BoxKeyPair(privateKey: cached.key) } catch { return nil }   // a damaged entry: the master key decides
    }

    /// Whether the class pair opens without an unlock (the master key or an after-first-unlock pair is cached).
    package func classPairCached(_ accessibility: Accessibility) -> Bool {
        if accessibility.survivesLock, cache.load(CacheName.classPair(accessibility).text) != nil { return true }
        return cache.load(Self.masterName) != nil
    }

    /// The class key pair from what the kernel keyring holds now, or nil. Its public half may come
    /// from the keyring's `classpub.*` entry, kept beside the master key for no longer than it;
    /// the caller checks it against the blob's class key id (a stale or wrong one opens nothing,
    /// and the full derivation, which never reads `classpub.*`, decides).
    package func cachedClassKeyPair(for accessibility: Accessibility) -> BoxKeyPair? {
        if let pair = afterFirstUnlockPair(accessibility) { return pair }
        guard let master = cachedMasterEntry else { return nil }
        let name = CacheName.classPublicKey(accessibility).text
        if let known = cache.load(name),
           let pair = try? ClassKeys.keyPair(masterKey: master.key, for: accessibility, knownPublicKey: known.key.unprotectedCopy()) {   // try?: stale: the full derivation
            return pair
        }
        let pair: BoxKeyPair
        do { pair = try ClassKeys.keyPair(masterKey: master.key, for: accessibility) } catch { return nil }
        // A full keyring quota costs the next read an X25519 multiplication, nothing more.
        var publicBytes = pair.publicKey
        if let expires = master.expiresAt, expires > KeyCache.now(), let publicKey = try? SecureBytes(consuming: &publicBytes) {   // try?: no locked memory: no hint
            try? cache.store(name, key: publicKey, timeout: UInt32(clamping: expires - KeyCache.now()))   // try?: a hint only
        }
        return pair
    }

    // MARK: Opening

    /// PAM accepted the password but the login protector did not open with it.
    package struct StaleLoginProtector: Error {
        package let underlying: KeychainError
    }

    /// Opens the login protector with a password (with 1.x's gate pairs while the keychain has them).
    package func open(password: SecureBytes) throws -> PasswordUnlock {
        do {
            return try store.unlockAll(password: password)
        } catch let error as KeychainError where error.reason == .wrongPassword {
            // PAM accepted this password, yet it does not open the login protector:
            // the password changed without Keygate hearing of it.
            throw StaleLoginProtector(underlying: error)
        }
    }

    /// Opens the recovery protector.
    package func open(recoveryKey: SecureBytes) throws -> SecureBytes {
        try store.unlock(recoveryKey: recoveryKey)
    }

    /// Holds the master key for the policy's lock-after (and the after-first-unlock keys with no
    /// timeout). A full keyring quota must not stop the read that unlocked: the next read simply
    /// authenticates again, so the error is returned for the caller's audit line, not thrown.
    @discardableResult
    package func hold(_ master: SecureBytes) -> (any Error)? {
        do {
            try LoginKeys.cacheUnlocked(master, in: cache, lockAfter: lockAfter)
            return nil
        } catch {
            return error
        }
    }

    // MARK: keys.json

    /// The class public keys keys.json records (without their seals), to send with an
    /// authentication that also opens the keychain: the gatekeeper seals them in the same run. nil
    /// when it records none for some class (a new keychain: `certify` follows the unlock).
    func recordedClassKeys() -> [GateRequest.ClassKey]? {
        let keys: PublicKeys?
        do { keys = try PublicKeys.load(directory: dataDirectory) } catch { return nil }   // damaged: certify rewrites it
        guard let keys else { return nil }
        var out: [GateRequest.ClassKey] = []
        for accessibility in Accessibility.allCases {
            guard let key = keys.classKey(accessibility) else { return nil }
            out.append(GateRequest.ClassKey(accessibility: accessibility, publicKey: key, seal: []))
        }
        return out
    }

    /// The class public key keys.json records for `accessibility` with the gatekeeper's seal on
    /// it; nil without one (a new or upgraded keychain).
    func sealedClassKey(for accessibility: Accessibility) throws -> GateRequest.ClassKey? {
        guard let keys = try PublicKeys.load(directory: dataDirectory), let key = keys.classKey(accessibility) else { return nil }
        let seal = keys.seal(accessibility)
        return seal.isEmpty ? nil : GateRequest.ClassKey(accessibility: accessibility, publicKey: key, seal: seal)
    }

    /// Records the class public keys of `master` in keys.json with the seals given for them.
    /// `sent`: the keys the seals were made for; a seal is kept only where the key sent is the one
    /// `master` derives (keys.json may have been replaced). Returns whether every class got its seal.
    func record(seals: [(accessibility: Accessibility, seal: [UInt8])], sent: [GateRequest.ClassKey],
                master: SecureBytes) throws -> Bool {
        var kept: [Accessibility: [UInt8]] = [:]
        for (accessibility, seal) in seals {
            guard let key = sent.first(where: { $0.accessibility == accessibility }),
                  try ClassKeys.keyPair(masterKey: master, for: accessibility).publicKey == key.publicKey else { continue }
            kept[accessibility] = seal
        }
        try store.recordClassKeys(masterKey: master, seals: kept)
        return kept.count == Accessibility.allCases.count
    }

    /// Records the seals `certify` returned for the class keys of `master`.
    func record(seals: [Accessibility: [UInt8]], master: SecureBytes) throws {
        try store.recordClassKeys(masterKey: master, seals: seals)
    }

    // MARK: The finger's copy

    /// The master key sealed to the gatekeeper's finger-unlock key (FingerUnlockKey): the user's
    /// file, useless without root's key.
    var fingerUnlockPath: String { dataDirectory + "/finger-unlock" }

    /// The sealed copy, when there is one of the right size.
    func fingerCopy() -> [UInt8]? {
        let sealed: [UInt8]?
        do { sealed = try AtomicFile.read(fingerUnlockPath, maxBytes: 256) } catch { return nil }   // unreadable: the password opens it
        guard let sealed, sealed.count == GateRequest.sealedMasterKeyBytes else { return nil }
        return sealed
    }

    /// Seals `master` to the gatekeeper's new finger-unlock key; an empty key (the finger unlock
    /// is off: no finger enrolled, or the policy's finger-unlock = 0) removes the copy. Without a
    /// copy the password is asked, so a failed write costs a prompt, nothing more.
    func armFinger(_ master: SecureBytes, publicKey: [UInt8]) {
        guard publicKey.count == BoxKeyPair.publicKeyBytes, let sealed = try? SealedBox.seal(master, to: publicKey) else {   // try?: unsealed is unarmed: the password opens it
            dropFingerCopy()
            return
        }
        try? AtomicFile.write(sealed, to: fingerUnlockPath, mode: 0o600)   // try?: without it the password is asked
    }

    /// Removes the sealed copy (absent already is fine).
    func dropFingerCopy() {
        try? AtomicFile.remove(fingerUnlockPath)   // try?: a copy that stays opens nothing once root dropped its key
    }

    /// Whether a master key a finger reopened is this keychain's (keys.json's class public key).
    func isThisKeychains(_ master: SecureBytes) throws -> Bool {
        guard let keys = try PublicKeys.load(directory: dataDirectory), let recorded = keys.classKey(.whenUnlocked) else { return false }
        return try ClassKeys.keyPair(masterKey: master, for: .whenUnlocked).publicKey == recorded
    }

    // MARK: Locking

    /// Drops the master key; returns whether it was held.
    package func evictMaster() -> Bool { cache.evict(Self.masterName) }

    /// Drops every Keygate key of this user; returns how many.
    package func evictAll() -> Int { cache.evictAll() }
}
