// The host protector on disk: <dir>/protectors/host.json, the master key wrapped
// (Protector, kind "host") under the key root derives from the host key
// (HostProtector). A keychain may be made with it instead of a login password (a
// service account has none): it then has a recovery protector and a host protector,
// and no presence or current-set keys, which only a typed password can wrap. Writes
// are atomic (AtomicFile) under the store's FileLock.

extension KeyStore {
    var hostPath: String { protectorsDirectory + "/host.json" }

    /// True when a host protector is on disk.
    package var hasHostProtector: Bool { AtomicFile.exists(hostPath) }

    /// True when a login (password) protector is on disk.
    package var hasLoginProtector: Bool { AtomicFile.exists(loginPath) }

    /// Creates a keychain with no password: a fresh master key wrapped by the host
    /// protector's key and by a new recovery key (returned, to be shown once), and the
    /// class public keys in keys.json, with the gatekeeper's `seals` on them (root computes
    /// them: GateSecrets).
    /// `.duplicateItem` when the keychain exists.
    package func initializeForHost(hostProtectorKey: SecureBytes, masterKey: SecureBytes,
                                   seals: [Accessibility: [UInt8]]) throws -> (masterKey: SecureBytes, recoveryKey: SecureBytes) {
        guard !isInitialized else { throw alreadyInitialized() }
        try PrivateDirectory.make(protectorsDirectory)
        return try FileLock.withExclusiveLock(lockPath) {
            guard !isInitialized else { throw alreadyInitialized() }
            let host = try hostProtector(masterKey: masterKey, hostProtectorKey: hostProtectorKey)
            let recoveryKey = try writeNewKeychain(opening: host, at: hostPath, masterKey: masterKey, seals: seals)
            return (masterKey, recoveryKey)
        }
    }

    /// Adds (or replaces) the host protector of an existing keychain, given its master
    /// key (checked against the login or recovery protector).
    package func writeHostProtector(masterKey: SecureBytes, hostProtectorKey: SecureBytes) throws {
        guard isInitialized else { throw notInitialized() }
        try FileLock.withExclusiveLock(lockPath) {
            let recorded = try (readProtector(loginPath, kind: Protector.Kind.password)
                                ?? readProtector(recoveryPath, kind: Protector.Kind.recovery))?.masterKeyID
            guard let recorded, try Protector.masterKeyID(of: masterKey) == recorded else {
                throw KeychainError.param("this master key does not belong to the keychain at \(directory): unlock it again and retry")
            }
            try AtomicFile.write(hostProtector(masterKey: masterKey, hostProtectorKey: hostProtectorKey).encoded(),
                                 to: hostPath, mode: Self.fileMode)
        }
    }

    /// The master key from the host protector. `.notAvailable` when there is none;
    /// `.authFailed` when the key does not open it (the host key was rotated, or the
    /// data folder came from another host).
    package func unlock(hostProtectorKey: SecureBytes) throws -> SecureBytes {
        guard let host = try readProtector(hostPath, kind: Protector.Kind.host) else {
            guard isInitialized else { throw notInitialized() }
            throw KeychainError.notAvailable("""
                this keychain has no host protector (\(hostPath)): as root, run `keygate init --host-protector --user NAME` while \
                the keychain is unlocked
                """)
        }
        let wrappingKey = try Protector.keyWrappingKey(hostProtectorKey, salt: host.saltBytes(path: hostPath))
        guard let masterKey = try host.unwrap(with: wrappingKey, path: hostPath) else {
            throw KeychainError.authFailed("""
                the host protector \(hostPath) does not open with this host's key: the host key was rotated, or this folder came \
                from another host; unlock with the recovery key (`keygate unlock --recovery` as the user), then run `keygate init \
                --host-protector --user NAME` as root again
                """)
        }
        return masterKey
    }

    private func hostProtector(masterKey: SecureBytes, hostProtectorKey: SecureBytes) throws -> Protector {
        let salt = Sodium.randomBytes(Protector.saltBytes)
        return try Protector.wrap(masterKey: masterKey, kind: Protector.Kind.host,
                                  wrappingKey: Protector.keyWrappingKey(hostProtectorKey, salt: salt), salt: salt, kdf: nil)
    }
}
