// What the login password still unwraps beyond the master key, and keys.json. Keygate
// 1.x wrapped a presence and a current-set key pair in the login protector; from 2.0
// those gates are the gatekeeper's (docs/GATEKEEPER.md), and the wrapped pairs are read
// only to migrate a 1.x keychain (LegacyGateMigration), then removed. keys.json holds the
// class public keys new items are sealed to, with the gatekeeper's seals on them.

/// Everything the login password unwraps.
package struct PasswordUnlock: Sendable {
    package let masterKey: SecureBytes
    /// Keygate 1.x's gate pairs, when this keychain has not been migrated yet.
    package let presence: BoxKeyPair?
    package let currentSet: BoxKeyPair?
}

extension KeyStore {
    /// Like unlock(password:) but also unwraps 1.x's presence and current-set private keys (nil once
    /// migrated, or never made). Same errors as unlock(password:).
    package func unlockAll(password: SecureBytes) throws -> PasswordUnlock {
        let (login, passwordKey, masterKey) = try openLogin(password: password)
        return PasswordUnlock(masterKey: masterKey,
                              presence: try unwrapGate(login.presence, .presence, login: login, passwordKey: passwordKey),
                              currentSet: try unwrapGate(login.currentSet, .currentSet, login: login, passwordKey: passwordKey))
    }

    /// True while the login protector still holds 1.x gate keys (the keychain is not migrated).
    package var hasLegacyGateKeys: Bool {
        guard let login = try? readProtector(loginPath, kind: Protector.Kind.password) else { return false }
        return login.presence != nil || login.currentSet != nil
    }

    /// Re-wraps the master key from old to new password. A keychain not migrated yet keeps its 1.x
    /// presence pair (so its items can still migrate) and gets a new 1.x current-set pair (its
    /// current-set items die, as on any password change). Atomic per file. .authFailed if old is wrong.
    /// `kdf` nil keeps the recorded Argon2id cost.
    package func changePassword(old: SecureBytes, new: SecureBytes, kdf: KDFParameters?) throws {
        guard isInitialized else { throw notInitialized() }
        try FileLock.withExclusiveLock(lockPath) {
            let (login, passwordKey, masterKey) = try openLogin(password: old)
            guard let cost = kdf ?? login.kdf else {
                throw KeychainError.param("the login protector records no Argon2id cost to keep: pass a cost, or let keygate calibrate one")
            }
            try cost.validateForNewProtector()
            let presence = try unwrapGate(login.presence, .presence, login: login, passwordKey: passwordKey)
            let replaced = try passwordProtector(masterKey: masterKey, password: new, kdf: cost, presence: presence,
                                                 currentSet: login.currentSet == nil ? nil : BoxKeyPair.generate())
            try AtomicFile.write(replaced.encoded(), to: loginPath, mode: Self.fileMode)
            clearLoginStale()
        }
    }

    /// Re-wrap with only the new password, given the master key (root reset / recovery path). The gates
    /// are the gatekeeper's: nothing but current-set items is lost (those die with the password change
    /// itself). Only items a 1.x keychain never migrated, whose gate keys the old password alone opened,
    /// are lost; the note returned says so. A damaged login protector is replaced, as long as the master
    /// key matches the recovery protector.
    package func resetPassword(masterKey: SecureBytes, new: SecureBytes, kdf: KDFParameters?) throws -> String {
        guard isInitialized else { throw notInitialized() }
        try PrivateDirectory.make(protectorsDirectory)
        return try FileLock.withExclusiveLock(lockPath) {
            let existing = try? readProtector(loginPath, kind: Protector.Kind.password)
            try checkMasterKey(masterKey, login: existing)
            guard let cost = kdf ?? existing?.kdf else {
                throw KeychainError.param("the login protector records no Argon2id cost to keep: pass a cost, or let keygate calibrate one")
            }
            try cost.validateForNewProtector()
            let hadLegacyGates = existing?.presence != nil || existing?.currentSet != nil
            let replaced = try passwordProtector(masterKey: masterKey, password: new, kdf: cost, presence: nil, currentSet: nil)
            try AtomicFile.write(replaced.encoded(), to: loginPath, mode: Self.fileMode)
            clearLoginStale()
            guard hadLegacyGates else { return """
                The new password now opens the keychain; items with user presence keep working, and current-set items (bound to the \
                old password) are invalidated.
                """ }
            return """
                The new password now opens the keychain. Items Keygate 1.x sealed with user presence or current-set and that were \
                never opened since the upgrade needed the old password: they are invalidated; add them again.
                """
        }
    }

    /// Drops 1.x's wrapped gate keys from the login protector and keys.json: the end of a migration.
    package func removeLegacyGateKeys() throws {
        try FileLock.withExclusiveLock(lockPath) {
            guard var login = try readProtector(loginPath, kind: Protector.Kind.password) else { return }
            if login.presence != nil || login.currentSet != nil {
                login.presence = nil
                login.currentSet = nil
                try AtomicFile.write(login.encoded(), to: loginPath, mode: Self.fileMode)
            }
            if var keys = try? PublicKeys.load(directory: directory), keys.presence != nil || keys.currentSet != nil {
                keys.presence = nil
                keys.currentSet = nil
                try keys.save(directory: directory)
            }
        }
    }

    /// Records the class public keys derived from the master key into keys.json, with the
    /// gatekeeper's seals on them when given (a class key whose recorded public key changes
    /// loses its old seal). Called at init and at each unlock.
    package func recordClassKeys(masterKey: SecureBytes, seals: [Accessibility: [UInt8]]) throws {
        try recordClassKeys(masterKey: masterKey, pairs: ClassKeys.allPairs(masterKey: masterKey), seals: seals)
    }

    /// `recordClassKeys`, with the class pairs of `masterKey` already derived (`ClassKeys.allPairs`).
    /// A keys.json that already records exactly these keys and seals is left alone, with no lock
    /// and no protector read: what every login after the first finds.
    package func recordClassKeys(masterKey: SecureBytes, pairs: [Accessibility: BoxKeyPair],
                                 seals: [Accessibility: [UInt8]]) throws {
        guard isInitialized else { throw notInitialized() }
        // A damaged or missing keys.json is for the locked write below to replace.
        if let onDisk = try? PublicKeys.load(directory: directory),
           Self.records(onDisk, pairs: pairs, seals: seals) { return }
        try FileLock.withExclusiveLock(lockPath) {
            try checkMasterKey(masterKey, login: try? readProtector(loginPath, kind: Protector.Kind.password))
            try writePublicKeys(nil, masterKey: masterKey, seals: seals, pairs: pairs)
        }
    }

    /// Whether `keys` records every class's public key of `pairs` and each seal of `seals`: a
    /// write would change nothing.
    static func records(_ keys: PublicKeys, pairs: [Accessibility: BoxKeyPair], seals: [Accessibility: [UInt8]]) -> Bool {
        guard keys.version == PublicKeys.currentVersion else { return false }
        for accessibility in Accessibility.allCases {
            guard let pair = pairs[accessibility],
                  keys.classKeys[accessibility.rawValue] == PublicKeys.encodeKey(pair.publicKey) else { return false }
            if let seal = seals[accessibility], keys.seals?[accessibility.rawValue] != PublicKeys.encodeKey(seal) { return false }
        }
        return true
    }

    // MARK: - Implementation

    /// Updates keys.json (call with the lock held): starts from `base`, or from the file on
    /// disk (a damaged one is replaced), sets every class public key from `masterKey` and
    /// the given seals; writes only if something changed.
    func writePublicKeys(_ base: PublicKeys?, masterKey: SecureBytes, seals: [Accessibility: [UInt8]],
                         pairs: [Accessibility: BoxKeyPair] = [:]) throws {
        let onDisk = try? PublicKeys.load(directory: directory)
        var keys = base ?? onDisk ?? PublicKeys()
        keys.version = PublicKeys.currentVersion
        var recordedSeals = keys.seals ?? [:]
        for accessibility in Accessibility.allCases {
            let pair = try pairs[accessibility] ?? ClassKeys.keyPair(masterKey: masterKey, for: accessibility)
            let encoded = PublicKeys.encodeKey(pair.publicKey)
            if keys.classKeys[accessibility.rawValue] != encoded { recordedSeals[accessibility.rawValue] = nil }
            keys.classKeys[accessibility.rawValue] = encoded
            if let seal = seals[accessibility] { recordedSeals[accessibility.rawValue] = PublicKeys.encodeKey(seal) }
        }
        keys.seals = recordedSeals.isEmpty ? nil : recordedSeals
        if keys != onDisk { try keys.save(directory: directory) }
    }

    /// A 1.x gate key from the login protector; nil if the protector has none. The password
    /// already opened the master key, so a gate key that does not open is a damaged file.
    private func unwrapGate(_ wrapped: WrappedGateKey?, _ kind: GateKind, login: Protector, passwordKey: SecureBytes) throws -> BoxKeyPair? {
        guard let wrapped else { return nil }
        guard let pair = try wrapped.unwrap(kind: kind, passwordKey: passwordKey, masterKeyID: login.masterKeyID, path: loginPath) else {
            throw KeychainError.decode("""
                \(loginPath) holds a \(WrappedGateKey.name(kind)) key that your password does not open, though it opens the master \
                key: the file is damaged; unlock with the recovery key (`keygate unlock --recovery`) and run `keygate passwd` \
                (items that need that key must then be added again)
                """)
        }
        return pair
    }

    /// Checks that `masterKey` is this keychain's, against the login or the recovery protector.
    private func checkMasterKey(_ masterKey: SecureBytes, login: Protector?) throws {
        // The recovery protector is read only when there is no login protector to check against.
        guard let recordedID = login?.masterKeyID ?? (try? readProtector(recoveryPath, kind: Protector.Kind.recovery))?.masterKeyID else {
            throw KeychainError.decode("""
                neither \(loginPath) nor \(recoveryPath) can be read, so the master key cannot be checked: restore them from a \
                backup
                """)
        }
        guard try Protector.masterKeyID(of: masterKey) == recordedID else { throw foreignMasterKey() }
    }

    private func foreignMasterKey() -> KeychainError {
        .param("this master key does not belong to the keychain at \(directory): unlock it again and retry")
    }
}
