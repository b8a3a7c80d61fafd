// The key operations a login needs, shared by KeyUnlocker and the PAM module
// (pam_keygate.so): unwrap the master key with the login password, cache it and
// the after-first-unlock class keys in the kernel keyring, unlock with the host
// protector instead of a password
// (service accounts), drop them at logout, and re-wrap the login protector
// when the password changes (or mark it stale when root reset the password). The
// caller chooses the process identity (the PAM module switches to the user first);
// this file only delegates: protectors to KeyStore, the cache to KeyCache,
// derivation to ClassKeys.

package enum LoginKeys {
    /// Kernel keyring names (KeyCache) of the unlocked master key and of the
    /// after-first-unlock class key.
    package static let masterName = CacheName.master.text
    package static let afterFirstUnlockName = CacheName.afterFirstUnlock.text

    /// The per-user data folder of a user, from the password database's home only: a
    /// PAM module runs in another program's environment, so no HOME or XDG variable counts.
    package static func dataDirectory(home: String) -> String {
        KeygatePaths.dataDirectory(home: home, environment: [:])
    }

    /// True when `dataDirectory` holds a login or recovery protector.
    package static func isInitialized(dataDirectory: String) -> Bool {
        KeyStore(directory: dataDirectory).isInitialized
    }

    /// Unwraps the master key with `password` and caches it for `lockAfter` seconds in
    /// the kernel keyring of the calling process's real uid, which must be `uid`, with the
    /// after-first-unlock class keys. Throws when the password does not open the keychain
    /// or caching failed. No device key is involved: this-device-only items open through
    /// the gatekeeper (docs/GATEKEEPER.md), which never hands that key to the user.
    /// Returns the master key, for the gatekeeper's seals (GateSecrets.seals, as root) and `recordClassKeys` (as the user).
    @discardableResult
    package static func unlockAndCache(password: SecureBytes, dataDirectory: String,
                                       uid: UInt32, lockAfter: UInt32) throws -> SecureBytes {
        let store = KeyStore(directory: dataDirectory)
        let master = try store.unlock(password: password)
        try cacheLogin(master, store: store, uid: uid, lockAfter: lockAfter)
        return master
    }

    /// The login protector a login opens, read once (`readLogin`): its Argon2id cost for root's
    /// check, and the protector itself for `unlockAtLogin`, which derives with that cost.
    package struct LoginProtector: Sendable {
        let protector: Protector
        package let passes: UInt64
        package let memoryBytes: UInt64
    }

    /// login.json of `dataDirectory`, read and decoded once; nil without a login protector.
    package static func readLogin(dataDirectory: String) throws -> LoginProtector? {
        try KeyStore(directory: dataDirectory).loginProtector().map {
            LoginProtector(protector: $0.protector, passes: $0.passes, memoryBytes: $0.memoryBytes)
        }
    }

    /// What a login does at auth: unwraps the master key from `login` (as `readLogin` read it,
    /// not the file again; nil: read now) with `password`, derives every class key pair once, and caches the
    /// master key for `lockAfter` seconds with the after-first-unlock keys (as `unlockAndCache`).
    /// keys.json is left to the caller, which records the pairs once, with root's seals
    /// (`recordClassKeys(master:pairs:seals:)`).
    package static func unlockAtLogin(password: SecureBytes, login: LoginProtector?, dataDirectory: String, uid: UInt32,
                                      lockAfter: UInt32) throws -> (master: SecureBytes, pairs: [Accessibility: BoxKeyPair]) {
        let store = KeyStore(directory: dataDirectory)
        // Without a login protector, the store's own read says what is missing and what to run.
        let master = try login.map { try store.unlock(password: password, login: $0.protector) } ?? store.unlock(password: password)
        let pairs = try ClassKeys.allPairs(masterKey: master)
        try cacheUnlocked(master, in: KeyCache(uid: uid), lockAfter: lockAfter, pairs: pairs)
        return (master, pairs)
    }

    /// Records the class public keys of `pairs` (those of `master`) with `seals` in keys.json (as
    /// the user); a keys.json that already says so is not rewritten.
    package static func recordClassKeys(master: SecureBytes, pairs: [Accessibility: BoxKeyPair],
                                        seals: [Accessibility: [UInt8]], dataDirectory: String) throws {
        try KeyStore(directory: dataDirectory).recordClassKeys(masterKey: master, pairs: pairs, seals: seals)
    }

    /// True when the master key of `uid` is in the kernel keyring (the caller's real uid
    /// must be `uid`): the keychain is unlocked.
    package static func isUnlocked(uid: UInt32) -> Bool {
        KeyCache(uid: uid).load(CacheName.master.text) != nil
    }

    /// True when root reset the password without the old one and the login protector
    /// was marked stale (`markLoginStale`): a login cannot unlock it.
    package static func isLoginStale(dataDirectory: String) -> Bool {
        KeyStore(directory: dataDirectory).isLoginStale
    }

    /// The cost `keygate init` calibrates on this machine (about 0.5 s), measured now.
    package static func calibratedCost() throws -> (passes: UInt64, memoryBytes: UInt64) {
        let cost = try KDFParameters.calibrate()
        return (cost.opsLimit, cost.memLimitBytes)
    }

    /// Records the class public keys of `master` with `seals` in keys.json (as the user).
    package static func recordClassKeys(master: SecureBytes, seals: [Accessibility: [UInt8]], dataDirectory: String) throws {
        try KeyStore(directory: dataDirectory).recordClassKeys(masterKey: master, seals: seals)
    }

    /// The host protector's key of `uid` on this host (root only), or nil when the host
    /// has no host key.
    package static func deriveHostProtectorKey(uid: UInt32, environment: KeygateEnvironment) throws -> SecureBytes? {
        try HostProtector.deriveFromHost(uid: uid, environment: environment)
    }

    package static func hasHostProtector(dataDirectory: String) -> Bool {
        KeyStore(directory: dataDirectory).hasHostProtector
    }

    /// What a login does, with the host protector's key (derived by root) instead of a
    /// password: unwraps the master key from protectors/host.json and caches it for
    /// `lockAfter` seconds, with the after-first-unlock class keys (no timeout). Call as
    /// the user (the kernel keyring of the real uid, which must be `uid`).
    package static func unlockWithHostProtector(_ key: SecureBytes, dataDirectory: String, uid: UInt32,
                                                lockAfter: UInt32) throws {
        let store = KeyStore(directory: dataDirectory)
        let master = try store.unlock(hostProtectorKey: key)
        try cacheLogin(master, store: store, uid: uid, lockAfter: lockAfter)
    }

    /// Caches what an unlock at login caches and records the class public keys in
    /// keys.json (without the gatekeeper's seals, which need an authentication through it).
    package static func cacheLogin(_ master: SecureBytes, store: KeyStore, uid: UInt32, lockAfter: UInt32) throws {
        try cacheUnlocked(master, in: KeyCache(uid: uid), lockAfter: lockAfter)
        try? store.recordClassKeys(masterKey: master, seals: [:])   // try?: a read-only data folder still unlocks; an add says why
    }

    /// Where the host key is read from.
    package static func hostKeyPath(_ environment: KeygateEnvironment) -> String { HostKey.path(environment) }

    /// Caches the master key for `lockAfter` seconds and the after-first-unlock class
    /// keys (symmetric, and the pairs of both after-first-unlock classes) with no timeout.
    /// Everything is tried; the first failure is thrown afterwards.
    package static func cacheUnlocked(_ master: SecureBytes, in cache: KeyCache, lockAfter: UInt32,
                              pairs: [Accessibility: BoxKeyPair] = [:]) throws {
        var firstError: (any Error)?
        do {
            try cache.store(CacheName.master.text, key: master, timeout: lockAfter)
        } catch {
            firstError = error
        }
        do {
            let afu = try ClassKeys.derive(masterKey: master, for: .afterFirstUnlock)
            try cache.store(CacheName.afterFirstUnlock.text, key: afu, timeout: 0)
            for accessibility in [Accessibility.afterFirstUnlock, .afterFirstUnlockThisDeviceOnly] {
                let pair = try pairs[accessibility] ?? ClassKeys.keyPair(masterKey: master, for: accessibility)
                try cache.store(CacheName.classPair(accessibility).text, key: pair.privateKey, timeout: 0)
            }
        } catch {
            firstError = firstError ?? error
        }
        if let firstError { throw firstError }
    }

    /// Drops the cached master key of `uid` (the caller's real uid must be `uid`): what the
    /// last logout does. The after-first-unlock keys stay, as after `keygate lock`. Keygate
    /// 1.x's device key entry goes too. True if the master key was cached.
    @discardableResult
    package static func lock(uid: UInt32) -> Bool {
        let cache = KeyCache(uid: uid)
        _ = cache.evict("device")
        return cache.evict(CacheName.master.text)
    }

    /// Root reset the password (no old one): the login protector still opens with the
    /// old password only. Records that in `<dataDirectory>/protectors/stale`, so that
    /// the next failed `keygate unlock` says how to recover. Call as the user.
    package static func markLoginStale(dataDirectory: String) throws {
        try KeyStore(directory: dataDirectory).markLoginStale()
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
        if let recorded = cost, (try? recorded.validateForNewProtector()) == nil {   // try?: below the floor: raised to it
            cost = KDFParameters(opsLimit: KDFParameters.minimumOps, memLimitBytes: KDFParameters.minimumMemory)
        }
        try store.changePassword(old: oldPassword, new: newPassword, kdf: cost)
    }

    /// Drops every current-set key Keygate 1.x cached for `uid` (any reuse scope; the caller's
    /// real uid must be `uid`): after a password change they belong to the replaced pair.
    package static func dropCurrentSetKeys(uid: UInt32) {
        let cache = KeyCache(uid: uid)
        for entry in cache.entries() where entry.name.hasPrefix("current-set.") {
            _ = cache.evict(entry.name)
        }
    }
}
