// The key operations a login needs, shared by KeyUnlocker and the PAM module
// (pam_keygate.so): unwrap the master key with the login password, cache it and
// the after-first-unlock class key in the kernel keyring, drop them at logout, and
// re-wrap the login protector when the password changes. The caller chooses the
// process identity (the PAM module switches to the user first); this file only
// delegates: protectors to KeyStore, the cache to KeyCache, derivation to ClassKeys.

package enum LoginKeys {
    /// Kernel keyring names (KeyCache) of the unlocked master key and of the
    /// after-first-unlock class key.
    static let masterName = "master"
    static let afterFirstUnlockName = "class.after-first-unlock"

    /// The cache name of an after-first-unlock class's key pair (gated and
    /// this-device-only items), which, like the symmetric key, outlives `keygate lock`.
    static func classPairName(_ accessibility: Accessibility) -> String { "classpair.\(accessibility.rawValue)" }

    /// The per-user data folder of a user, from the password database's home only: a
    /// PAM module runs in another program's environment, so no HOME or XDG variable counts.
    package static func dataDirectory(uid: UInt32, name: String, home: String) -> String {
        KeygatePaths.dataDirectory(for: UserAccount(uid: uid, name: name, home: home), environment: [:])
    }

    /// True when `dataDirectory` holds a login or recovery protector.
    package static func isInitialized(dataDirectory: String) -> Bool {
        KeyStore(directory: dataDirectory).isInitialized
    }

    /// Unwraps the master key with `password` and caches it for `lockAfter` seconds in
    /// the kernel keyring of the calling process's real uid, which must be `uid`.
    /// Throws when the password does not open the keychain or caching failed.
    package static func unlockAndCache(password: SecureBytes, dataDirectory: String,
                                       uid: UInt32, lockAfter: UInt32) throws {
        let master = try KeyStore(directory: dataDirectory).unlock(password: password)
        try cacheUnlocked(master, in: KeyCache(uid: uid), lockAfter: lockAfter)
    }

    /// Caches the master key for `lockAfter` seconds and the after-first-unlock class
    /// key with no timeout. Both are tried; the first failure is thrown afterwards.
    static func cacheUnlocked(_ master: SecureBytes, in cache: KeyCache, lockAfter: UInt32) throws {
        var firstError: (any Error)?
        do {
            try cache.store(masterName, key: master, timeout: lockAfter)
        } catch {
            firstError = error
        }
        do {
            let afu = try ClassKeys.derive(masterKey: master, for: .afterFirstUnlock)
            try cache.store(afterFirstUnlockName, key: afu, timeout: 0)
            let pair = try ClassKeys.keyPair(masterKey: master, for: .afterFirstUnlock, deviceKey: nil)
            try cache.store(classPairName(.afterFirstUnlock), key: pair.privateKey, timeout: 0)
        } catch {
            firstError = firstError ?? error
        }
        if let firstError { throw firstError }
    }

    /// Drops the cached master key of `uid` (the caller's real uid must be `uid`).
    /// The after-first-unlock key stays, as after `keygate lock`. True if one was cached.
    @discardableResult
    package static func lock(uid: UInt32) -> Bool {
        KeyCache(uid: uid).evict(masterName)
    }

    /// Re-wraps the login protector from `oldPassword` to `newPassword`: the master and
    /// presence keys move to the new password, and the current-set key is replaced, so
    /// current-set items die as designed. Keeps the recorded Argon2id cost, or raises it
    /// to the floor for new protectors when it is below (a test-built protector, or an
    /// older weaker default).
    package static func rewrapLogin(oldPassword: SecureBytes, newPassword: SecureBytes,
                                    dataDirectory: String) throws {
        let store = KeyStore(directory: dataDirectory)
        var cost = try store.loginKDF()
        if let recorded = cost, (try? recorded.validateForNewProtector()) == nil {
            cost = KDFParameters(opsLimit: KDFParameters.minimumOps, memLimitBytes: KDFParameters.minimumMemory)
        }
        try store.changePassword(old: oldPassword, new: newPassword, kdf: cost)
    }
}
