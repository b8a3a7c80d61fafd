// The keys the login password gates beyond the master key: the presence and current-set
// key pairs (WrappedGateKey, inside the login protector), and the public-key file
// keys.json (PublicKeys) that lets items be sealed without an unlock. One Argon2id run
// (KDFParameters) unwraps everything; the master key alone opens no gate key.

/// Everything the login password unwraps.
struct PasswordUnlock: Sendable {
    let masterKey: SecureBytes
    let presence: BoxKeyPair?
    let currentSet: BoxKeyPair?
}

extension KeyStore {
    /// Like unlock(password:) but also unwraps the presence and current-set private keys (nil if this keychain
    /// predates them). Same errors as unlock(password:).
    func unlockAll(password: SecureBytes) throws -> PasswordUnlock {
        let (login, passwordKey, masterKey) = try openLogin(password: password)
        return PasswordUnlock(masterKey: masterKey,
                              presence: try unwrapGate(login.presence, .presence, login: login, passwordKey: passwordKey),
                              currentSet: try unwrapGate(login.currentSet, .currentSet, login: login, passwordKey: passwordKey))
    }

    /// Creates presence and current-set key pairs if missing (wrapped by `password`, which must open the login
    /// protector), and (re)writes keys.json. Idempotent. Called after every password unlock.
    /// When both pairs exist it runs no Argon2id (the password is not needed then).
    func ensureGateKeys(password: SecureBytes, masterKey: SecureBytes) throws {
        guard isInitialized else { throw notInitialized() }
        try FileLock.withExclusiveLock(lockPath) {
            guard var login = try readProtector(loginPath, kind: Protector.Kind.password) else { throw missing(loginPath) }
            guard try Protector.masterKeyID(of: masterKey) == login.masterKeyID else { throw foreignMasterKey() }
            if login.presence == nil || login.currentSet == nil {
                guard let kdf = login.kdf else { throw Protector.corrupt(loginPath) }
                let passwordKey = try kdf.deriveKey(password: password, salt: login.saltBytes(path: loginPath))
                guard try login.unwrap(with: passwordKey, path: loginPath) != nil else { throw wrongPassword() }
                if login.presence == nil {
                    login.presence = try WrappedGateKey.wrap(BoxKeyPair.generate(), kind: .presence, passwordKey: passwordKey, masterKeyID: login.masterKeyID)
                }
                if login.currentSet == nil {
                    login.currentSet = try WrappedGateKey.wrap(BoxKeyPair.generate(), kind: .currentSet, passwordKey: passwordKey, masterKeyID: login.masterKeyID)
                }
                try AtomicFile.write(login.encoded(), to: loginPath, mode: Self.fileMode)
            }
            try writePublicKeys(nil, gatesFrom: login, masterKey: masterKey, deviceKey: nil)
        }
    }

    /// Re-wraps master and presence from old to new password and REPLACES the current-set pair with a fresh one
    /// (so current-set items are invalidated); rewrites keys.json. Atomic per file. .authFailed if old is wrong.
    /// `kdf` nil keeps the recorded Argon2id cost.
    func changePassword(old: SecureBytes, new: SecureBytes, kdf: KDFParameters?) throws {
        guard isInitialized else { throw notInitialized() }
        try FileLock.withExclusiveLock(lockPath) {
            let (login, passwordKey, masterKey) = try openLogin(password: old)
            guard let cost = kdf ?? login.kdf else {
                throw KeychainError.param("the login protector records no Argon2id cost to keep: pass a cost, or let keygate calibrate one")
            }
            try cost.validateForNewProtector()
            let presence = try unwrapGate(login.presence, .presence, login: login, passwordKey: passwordKey) ?? BoxKeyPair.generate()
            let replaced = try passwordProtector(masterKey: masterKey, password: new, kdf: cost,
                                                 presence: presence, currentSet: BoxKeyPair.generate())
            try AtomicFile.write(replaced.encoded(), to: loginPath, mode: Self.fileMode)
            try writePublicKeys(nil, gatesFrom: replaced, masterKey: masterKey, deviceKey: nil)
        }
    }

    /// Re-wrap with only the new password, given the master key (root reset / recovery path): presence cannot be
    /// carried over without the old password, so BOTH presence and current-set pairs are replaced (items gated on
    /// them become invalidated); documented in the message returned. Returns a short note for the user.
    /// A damaged login protector is replaced, as long as the master key matches the recovery protector.
    func resetPassword(masterKey: SecureBytes, new: SecureBytes, kdf: KDFParameters?) throws -> String {
        guard isInitialized else { throw notInitialized() }
        try PrivateDirectory.make(protectorsDirectory)
        return try FileLock.withExclusiveLock(lockPath) {
            let existing = try? readProtector(loginPath, kind: Protector.Kind.password)
            try checkMasterKey(masterKey, login: existing)
            guard let cost = kdf ?? existing?.kdf else {
                throw KeychainError.param("the login protector records no Argon2id cost to keep: pass a cost, or let keygate calibrate one")
            }
            try cost.validateForNewProtector()
            let published = try? PublicKeys.load(directory: directory)
            let hadGateKeys = existing?.presence != nil || existing?.currentSet != nil
                || published?.presence != nil || published?.currentSet != nil
            let replaced = try passwordProtector(masterKey: masterKey, password: new, kdf: cost,
                                                 presence: BoxKeyPair.generate(), currentSet: BoxKeyPair.generate())
            try AtomicFile.write(replaced.encoded(), to: loginPath, mode: Self.fileMode)
            clearLoginStale()
            try writePublicKeys(nil, gatesFrom: replaced, masterKey: masterKey, deviceKey: nil)
            guard hadGateKeys else { return "The new password now opens the keychain." }
            return "The new password now opens the keychain. Items that required user presence or the current password (current-set) were sealed to keys only the old password could open: they are invalidated; add them again."
        }
    }

    /// Records the class public keys derived from the master key (and device key, when given, for the
    /// this-device-only classes) into keys.json. Called at init and at each unlock.
    func recordClassKeys(masterKey: SecureBytes, deviceKey: SecureBytes?) throws {
        guard isInitialized else { throw notInitialized() }
        try FileLock.withExclusiveLock(lockPath) {
            try checkMasterKey(masterKey, login: try? readProtector(loginPath, kind: Protector.Kind.password))
            try writePublicKeys(nil, gatesFrom: nil, masterKey: masterKey, deviceKey: deviceKey)
        }
    }

    // MARK: - Implementation

    /// Updates keys.json (call with the lock held): starts from `base`, or from the file on
    /// disk (a damaged one is replaced), sets the class public keys when `masterKey` is given
    /// (this-device-only ones only with `deviceKey`) and the gate public keys from `login`
    /// when given; writes only if something changed.
    func writePublicKeys(_ base: PublicKeys?, gatesFrom login: Protector?, masterKey: SecureBytes?, deviceKey: SecureBytes?) throws {
        let onDisk = try? PublicKeys.load(directory: directory)
        var keys = base ?? onDisk ?? PublicKeys()
        keys.version = PublicKeys.currentVersion
        if let masterKey {
            for accessibility in Accessibility.allCases where !accessibility.isThisDeviceOnly || deviceKey != nil {
                let pair = try ClassKeys.keyPair(masterKey: masterKey, for: accessibility, deviceKey: deviceKey)
                keys.classKeys[accessibility.rawValue] = PublicKeys.encodeKey(pair.publicKey)
            }
        }
        if let login {
            keys.presence = try login.presence.map { PublicKeys.encodeKey(try $0.publicKeyBytes(path: loginPath)) }
            keys.currentSet = try login.currentSet.map { PublicKeys.encodeKey(try $0.publicKeyBytes(path: loginPath)) }
        }
        if keys != onDisk { try keys.save(directory: directory) }
    }

    /// The gate public keys new items are sealed to, as the login protector records them.
    /// login.json is the truth (it holds the private halves); keys.json is a copy written just
    /// after it, so a process killed between the two writes (`keygate passwd`, the PAM module's
    /// re-wrap) leaves a stale copy, which would seal new items to keys nobody holds. Such a
    /// copy is rewritten here from login.json, under the keychain's lock; no secret is needed.
    func syncGatePublicKeys(_ published: PublicKeys) throws -> PublicKeys {
        guard let login = try readProtector(loginPath, kind: Protector.Kind.password) else { return published }
        let presence = try login.presence.map { PublicKeys.encodeKey(try $0.publicKeyBytes(path: loginPath)) }
        let currentSet = try login.currentSet.map { PublicKeys.encodeKey(try $0.publicKeyBytes(path: loginPath)) }
        if published.presence == presence, published.currentSet == currentSet { return published }
        return try FileLock.withExclusiveLock(lockPath) {
            guard let login = try readProtector(loginPath, kind: Protector.Kind.password) else { return published }
            try writePublicKeys(nil, gatesFrom: login, masterKey: nil, deviceKey: nil)
            return try PublicKeys.load(directory: directory) ?? published
        }
    }

    /// A gate key from the login protector; nil if the protector predates it. The password
    /// already opened the master key, so a gate key that does not open is a damaged file.
    private func unwrapGate(_ wrapped: WrappedGateKey?, _ kind: GateKind, login: Protector, passwordKey: SecureBytes) throws -> BoxKeyPair? {
        guard let wrapped else { return nil }
        guard let pair = try wrapped.unwrap(kind: kind, passwordKey: passwordKey, masterKeyID: login.masterKeyID, path: loginPath) else {
            throw KeychainError.decode("\(loginPath) holds a \(WrappedGateKey.name(kind)) key that your password does not open, though it opens the master key: the file is damaged; unlock with the recovery key (`keygate unlock --recovery`) and run `keygate passwd` (items that need that key must then be added again)")
        }
        return pair
    }

    /// Checks that `masterKey` is this keychain's, against the login or the recovery protector.
    private func checkMasterKey(_ masterKey: SecureBytes, login: Protector?) throws {
        let recovery = try? readProtector(recoveryPath, kind: Protector.Kind.recovery)
        guard let recordedID = login?.masterKeyID ?? recovery?.masterKeyID else {
            throw KeychainError.decode("neither \(loginPath) nor \(recoveryPath) can be read, so the master key cannot be checked: restore them from a backup")
        }
        guard try Protector.masterKeyID(of: masterKey) == recordedID else { throw foreignMasterKey() }
    }

    private func foreignMasterKey() -> KeychainError {
        .param("this master key does not belong to the keychain at \(directory): unlock it again and retry")
    }

    private func wrongPassword() -> KeychainError {
        .authFailed("this password does not open the keychain: if your login password changed outside Keygate, run `keygate passwd`, or unlock with the recovery key (`keygate unlock --recovery`)")
    }
}
