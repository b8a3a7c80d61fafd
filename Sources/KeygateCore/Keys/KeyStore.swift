// The master key and its protectors on disk: <dir>/protectors/login.json (password,
// Argon2id) and recovery.json (recovery key), one file each, written atomically
// (AtomicFile) in a private folder (PrivateDirectory). Wrapping is delegated to Protector.
// A host protector (host.json, KeyStore+HostProtector.swift) may sit beside them.
// The login protector also wraps the presence and current-set private keys, whose public
// halves (with the class public keys) go to <dir>/keys.json (PublicKeys); the operations
// on those live in KeyStore+GateKeys.swift. Multi-file changes hold FileLock.
// protectors/stale marks a login protector left behind by a root password reset
// (pam_keygate's chauthtok without the old password): a failed password unlock then
// says how to recover, and a successful one or a re-wrap removes it.

package final class KeyStore: Sendable {
    static let maxProtectorBytes = 64 * 1024
    static let fileMode: UInt32 = 0o600

    let directory: String

    package init(directory: String) {
        self.directory = directory
    }

    var protectorsDirectory: String { directory + "/protectors" }
    var loginPath: String { protectorsDirectory + "/login.json" }
    var recoveryPath: String { protectorsDirectory + "/recovery.json" }
    var publicKeysPath: String { PublicKeys.path(directory: directory) }
    var lockPath: String { directory + "/.keys.lock" }
    var stalePath: String { protectorsDirectory + "/stale" }

    package var isInitialized: Bool {
        AtomicFile.exists(loginPath) || AtomicFile.exists(recoveryPath)
    }

    package func initialize(password: SecureBytes, kdf: KDFParameters) throws -> (masterKey: SecureBytes, recoveryKey: SecureBytes) {
        guard !isInitialized else { throw alreadyInitialized() }
        try kdf.validateForNewProtector()
        try PrivateDirectory.make(protectorsDirectory)
        return try FileLock.withExclusiveLock(lockPath) {
            guard !isInitialized else { throw alreadyInitialized() }
            let masterKey = try SecureBytes.random(count: Protector.masterKeyBytes)
            let login = try passwordProtector(masterKey: masterKey, password: password, kdf: kdf,
                                              presence: nil, currentSet: nil)
            let recoveryKey = try writeNewKeychain(opening: login, at: loginPath, masterKey: masterKey, seals: [:])
            return (masterKey, recoveryKey)
        }
    }

    /// Writes a new keychain's files under the lock: `protector` (the login or the host
    /// protector) at `path`, a recovery protector for a new recovery key (returned, to be shown
    /// once), and keys.json with `seals`; a failure removes what was written.
    func writeNewKeychain(opening protector: Protector, at path: String, masterKey: SecureBytes,
                          seals: [Accessibility: [UInt8]]) throws -> SecureBytes {
        let recoveryKey = try RecoveryKey.generate()
        let recoverySalt = Sodium.randomBytes(Protector.saltBytes)
        let recovery = try Protector.wrap(masterKey: masterKey, kind: Protector.Kind.recovery,
                                          wrappingKey: Protector.recoveryWrappingKey(recoveryKey: recoveryKey, salt: recoverySalt),
                                          salt: recoverySalt, kdf: nil)
        try AtomicFile.create(protector.encoded(), at: path, mode: Self.fileMode)
        do {
            try AtomicFile.create(recovery.encoded(), at: recoveryPath, mode: Self.fileMode)
            // A fresh keychain: keys.json is rebuilt from scratch, dropping any left by an earlier one.
            try writePublicKeys(PublicKeys(), masterKey: masterKey, seals: seals)
        } catch {
            // All or nothing: a keychain without its recovery key or its public keys is a trap.
            try? AtomicFile.remove(recoveryPath)
            try? AtomicFile.remove(path)
            throw error
        }
        return recoveryKey
    }

    package func unlock(password: SecureBytes) throws -> SecureBytes {
        try openLogin(password: password).masterKey
    }

    /// Unwraps the master key from `login`, a login protector read earlier (`loginProtector()`),
    /// not from the file again: the PAM helper checks the recorded cost against root's ceiling
    /// first, and derives with exactly the cost it checked.
    package func unlock(password: SecureBytes, login: Protector) throws -> SecureBytes {
        try openLogin(password: password, login: login).masterKey
    }

    /// The login protector as login.json holds it now, with the Argon2id cost it records (0
    /// passes and bytes when it records none: `unlock(password:login:)` then says it is
    /// damaged); nil without one.
    package func loginProtector() throws -> (protector: Protector, passes: UInt64, memoryBytes: UInt64)? {
        try readProtector(loginPath, kind: Protector.Kind.password).map { ($0, $0.kdf?.opsLimit ?? 0, $0.kdf?.memLimitBytes ?? 0) }
    }

    package func unlock(recoveryKey: SecureBytes) throws -> SecureBytes {
        guard let recovery = try readProtector(recoveryPath, kind: Protector.Kind.recovery) else { throw missing(recoveryPath) }
        let wrappingKey = try Protector.recoveryWrappingKey(recoveryKey: recoveryKey, salt: recovery.saltBytes(path: recoveryPath))
        guard let masterKey = try recovery.unwrap(with: wrappingKey, path: recoveryPath) else {
            throw KeychainError.authFailed("""
                this recovery key does not open the keychain: check it against the copy you saved, or unlock with your password
                """)
        }
        return masterKey
    }

    /// Re-wraps the login protector for `newPassword`. `kdf` nil keeps the recorded cost.
    /// A damaged login protector is replaced, as long as the master key matches the
    /// recovery protector: that is how a user recovers from one. Without the old password
    /// the presence and current-set keys cannot be carried over: this is
    /// `resetPassword(masterKey:new:kdf:)`, which replaces them, without its note.
    func rewrapLogin(masterKey: SecureBytes, newPassword: SecureBytes, kdf: KDFParameters?) throws {
        _ = try resetPassword(masterKey: masterKey, new: newPassword, kdf: kdf)
    }

    /// Records that the login password was reset without the old one (the protector
    /// still opens with the old password only): `protectors/stale`, 0600, atomically,
    /// holding the time of the reset.
    package func markLoginStale() throws {
        let now = WallClock.seconds
        let text = """
            login password reset without the old one at \(now) (seconds since 1970, UTC): unlock with the recovery key \
            (`keygate passwd --recovery`) or run `keygate passwd` with the old password\n
            """
        try AtomicFile.write(Array(text.utf8), to: stalePath, mode: Self.fileMode)
    }

    /// True when `markLoginStale` was called and no re-wrap or password unlock followed.
    package var isLoginStale: Bool { AtomicFile.exists(stalePath) }

    /// Removes the stale mark (best effort): the login protector matches the password again.
    func clearLoginStale() {
        guard isLoginStale else { return }
        try? AtomicFile.remove(stalePath)
    }

    /// The cost recorded in the login protector (nil when there is none).
    package func loginKDF() throws -> KDFParameters? {
        try readProtector(loginPath, kind: Protector.Kind.password)?.kdf
    }

    // MARK: - Implementation

    /// A new login protector: the master key and both gate keys under one fresh Argon2id run.
    func passwordProtector(masterKey: SecureBytes, password: SecureBytes, kdf: KDFParameters,
                           presence: BoxKeyPair?, currentSet: BoxKeyPair?) throws -> Protector {
        let salt = Sodium.randomBytes(KDFParameters.saltBytes)
        let wrappingKey = try kdf.deriveKey(password: password, salt: salt)
        var login = try Protector.wrap(masterKey: masterKey, kind: Protector.Kind.password, wrappingKey: wrappingKey, salt: salt, kdf: kdf)
        login.presence = try presence.map { try WrappedGateKey.wrap($0, kind: .presence, passwordKey: wrappingKey, masterKeyID: login.masterKeyID) }
        login.currentSet = try currentSet.map {
            try WrappedGateKey.wrap($0, kind: .currentSet, passwordKey: wrappingKey, masterKeyID: login.masterKeyID)
        }
        return login
    }

    /// Runs Argon2id once on `password` and unwraps the master key: the login protector,
    /// the Argon2id output (which also unwraps the gate keys) and the master key.
    func openLogin(password: SecureBytes, login read: Protector? = nil) throws -> (login: Protector, passwordKey: SecureBytes, masterKey: SecureBytes) {
        guard let login = try read ?? readProtector(loginPath, kind: Protector.Kind.password) else { throw missing(loginPath) }
        guard let kdf = login.kdf else { throw Protector.corrupt(loginPath) }
        let wrappingKey = try kdf.deriveKey(password: password, salt: login.saltBytes(path: loginPath))
        guard let masterKey = try login.unwrap(with: wrappingKey, path: loginPath) else {
            if isLoginStale {
                throw KeychainError(.authFailed, """
                    your password was reset without your old one, so it does not open the keychain: unlock with the recovery key \
                    (`keygate passwd --recovery`), or, if you know the old password, run `keygate passwd`
                    """, reason: .wrongPassword)
            }
            throw KeychainError(.authFailed, """
                this password does not open the keychain: if your login password changed outside Keygate, run `keygate passwd`, or \
                unlock with the recovery key (`keygate unlock --recovery`)
                """, reason: .wrongPassword)
        }
        clearLoginStale()
        return (login, wrappingKey, masterKey)
    }

    func readProtector(_ path: String, kind: String) throws -> Protector? {
        guard let bytes = try AtomicFile.read(path, maxBytes: Self.maxProtectorBytes) else { return nil }
        let protector = try Protector.decode(bytes, path: path)
        guard protector.kind == kind else {
            throw KeychainError.decode("""
                \(path) holds a \"\(protector.kind)\" protector where a \"\(kind)\" one belongs: move it aside and restore the \
                right file from a backup
                """)
        }
        return protector
    }

    func missing(_ path: String) -> KeychainError {
        guard isInitialized else { return notInitialized() }
        if path == loginPath {
            return .notAvailable("""
                the login protector \(path) is missing: unlock with the recovery key (`keygate unlock --recovery`), then run \
                `keygate passwd` to write a new one
                """)
        }
        return .notAvailable("""
            the recovery protector \(path) is missing: unlock with your password; restore the file from a backup to use the \
            recovery key again
            """)
    }

    func notInitialized() -> KeychainError {
        .notAvailable("the keychain is not initialised: run `keygate init`")
    }

    func alreadyInitialized() -> KeychainError {
        .duplicateItem("""
            the keychain is already initialised (\(protectorsDirectory)): unlock it with `keygate unlock`, or change its \
            password with `keygate passwd`
            """)
    }
}
