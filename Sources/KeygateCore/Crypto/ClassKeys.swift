// Class keys: per accessibility class, derived from the master key with libsodium's
// `crypto_kdf_derive_from_key` (Subkey). The symmetric class key (context "KGclass1")
// seals scheme-1 blobs; the class key pair (X25519 from a seed under context "KGclsbx1",
// BoxKeyPair) receives the class share of gated (scheme-2) blobs. Keygate 1.x further
// bound the this-device-only classes' seed to the device key (keyed BLAKE2b,
// `legacyKeyPair`); from 2.0 those items carry a device slot the gatekeeper opens instead
// (docs/GATEKEEPER.md), and every class pair comes from the master key alone.

package enum ClassKeys {
    static let context = "KGclass1"
    static let keyPairContext = "KGclsbx1"
    static let keyBytes = 32

    /// The symmetric key for scheme-1 blobs of this class.
    package static func derive(masterKey: SecureBytes, for accessibility: Accessibility) throws -> SecureBytes {
        try checkMasterKey(masterKey)
        return try Subkey.derive(from: masterKey, id: subkeyID(accessibility), context: context, bytes: keyBytes)
    }

    /// The class key pair of every class: X25519 from the class's seed.
    package static func keyPair(masterKey: SecureBytes, for accessibility: Accessibility) throws -> BoxKeyPair {
        try BoxKeyPair.derive(seed: seed(masterKey: masterKey, for: accessibility))
    }

    /// The key pair of every class, each derived once (a login records and seals all five).
    package static func allPairs(masterKey: SecureBytes) throws -> [Accessibility: BoxKeyPair] {
        var pairs: [Accessibility: BoxKeyPair] = [:]
        for accessibility in Accessibility.allCases { pairs[accessibility] = try keyPair(masterKey: masterKey, for: accessibility) }
        return pairs
    }

    /// The class key pair given its public half from an earlier derivation (the kernel keyring's
    /// `classpub.*`): the private half only is derived (BoxKeyPair.derive(seed:knownPublicKey:)).
    package static func keyPair(masterKey: SecureBytes, for accessibility: Accessibility,
                                knownPublicKey publicKey: [UInt8]) throws -> BoxKeyPair {
        try BoxKeyPair.derive(seed: seed(masterKey: masterKey, for: accessibility), knownPublicKey: publicKey)
    }

    /// The class's seed: a crypto_kdf subkey of the master key (distinct from the symmetric class key).
    package static func seed(masterKey: SecureBytes, for accessibility: Accessibility) throws -> SecureBytes {
        try checkMasterKey(masterKey)
        return try Subkey.derive(from: masterKey, id: subkeyID(accessibility), context: keyPairContext, bytes: BoxKeyPair.seedBytes)
    }

    /// Keygate 1.x's class key pair: seed = crypto_kdf subkey of the master key for the class (distinct from the symmetric
    /// class key), and for *-this-device-only classes seed = BLAKE2b(key: deviceKey, message: that seed).
    /// Throws .param if a this-device-only class is asked for without a device key.
    static func legacyKeyPair(masterKey: SecureBytes, for accessibility: Accessibility, deviceKey: SecureBytes?) throws -> BoxKeyPair {
        try checkMasterKey(masterKey)
        let seed = try Subkey.derive(from: masterKey, id: subkeyID(accessibility), context: keyPairContext, bytes: BoxKeyPair.seedBytes)
        guard accessibility.isThisDeviceOnly else { return try BoxKeyPair.derive(seed: seed) }
        guard let deviceKey else {
            throw KeychainError.param("""
                the \(accessibility.rawValue) class needs this host's device key, and none is available: log in again so the \
                session hands it over, or use a class that is not this-device-only
                """)
        }
        guard (16...64).contains(deviceKey.count) else {
            throw KeychainError.param("internal: a device key must be 16 to 64 bytes, not \(deviceKey.count)")
        }
        let bound = try GenericHash.hash(seed, secretKey: deviceKey, outputBytes: BoxKeyPair.seedBytes)
        return try BoxKeyPair.derive(seed: bound)
    }

    /// Fixed forever: renumbering would make every stored item unreadable.
    static func subkeyID(_ accessibility: Accessibility) -> UInt64 {
        switch accessibility {
        case .whenUnlocked: return 1
        case .afterFirstUnlock: return 2
        case .whenPasscodeSetThisDeviceOnly: return 3
        case .whenUnlockedThisDeviceOnly: return 4
        case .afterFirstUnlockThisDeviceOnly: return 5
        }
    }

    private static func checkMasterKey(_ masterKey: SecureBytes) throws {
        guard masterKey.count == Protector.masterKeyBytes else {
            throw KeychainError.param("internal: the master key must be \(Protector.masterKeyBytes) bytes, not \(masterKey.count)")
        }
    }
}
