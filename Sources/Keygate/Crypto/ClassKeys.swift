// Class keys: one 256-bit key per accessibility class, derived from the master key
// with libsodium's `crypto_kdf_derive_from_key` (BLAKE2b), context "KGclass1".
// Items seal with the key of their class, so each class can be cached and dropped apart.
internal import CSodium

enum ClassKeys {
    static let context = "KGclass1"
    static let keyBytes = 32

    static func derive(masterKey: SecureBytes, for accessibility: Accessibility) throws -> SecureBytes {
        guard masterKey.count == Int(crypto_kdf_keybytes()) else {
            throw KeychainError.param("internal: the master key must be \(crypto_kdf_keybytes()) bytes, not \(masterKey.count)")
        }
        let subkey = try SecureBytes(count: keyBytes)
        let rc = subkey.withUnsafeMutableBytes { out in out.withNonNullBytes { outp in
            masterKey.withUnsafeBytes { key in key.withNonNullBytes { keyp in
                context.withCString { ctx in
                    crypto_kdf_derive_from_key(outp, out.count, subkeyID(accessibility), ctx, keyp)
                }
            } }
        } }
        guard rc == 0 else {
            throw KeychainError.notAvailable("libsodium could not derive a class key: reinstall libsodium23 and try again")
        }
        return subkey
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
}
