// BLAKE2b (libsodium's `crypto_generichash`): key identifiers, the recovery
// protector's wrapping key, the recovery key's checksum, gated blobs' content keys and
// this-device-only seeds. Keyed hashing only: every use passes its own key, so outputs
// from different uses never collide.
internal import CSodium

package enum GenericHash {
    /// BLAKE2b of `input` under `key` (16...64 bytes), `outputBytes` (16...64) long,
    /// written straight into locked memory. The C function is `crypto_generichash(3)`.
    static func hash(_ input: SecureBytes, key: [UInt8], outputBytes: Int) throws -> SecureBytes {
        try key.withUnsafeBytes { k in try hash(input, keyBytes: k, outputBytes: outputBytes) }
    }

    /// As `hash(_:key:outputBytes:)`, with a secret key held in locked memory.
    package static func hash(_ input: SecureBytes, secretKey: SecureBytes, outputBytes: Int) throws -> SecureBytes {
        try secretKey.withUnsafeBytes { k in try hash(input, keyBytes: k, outputBytes: outputBytes) }
    }

    /// BLAKE2b of public data (key ids): an ordinary array, no locked memory. Sizes are
    /// the caller's constants, checked by tests; out-of-range sizes give zero bytes.
    package static func publicDigest(_ input: [UInt8], key: [UInt8], outputBytes: Int) -> [UInt8] {
        guard (16...64).contains(outputBytes), (16...64).contains(key.count) else {
            return [UInt8](repeating: 0, count: max(0, outputBytes))
        }
        var out = [UInt8](repeating: 0, count: outputBytes)
        _ = out.withUnsafeMutableBytes { o in o.withNonNullBytes { op in
            input.withUnsafeBytes { i in i.withNonNullBytes { ip in
                key.withUnsafeBytes { k in k.withNonNullBytes { kp in
                    crypto_generichash(op, o.count, ip, UInt64(i.count), kp, k.count)
                } }
            } }
        } }
        return out
    }

    private static func hash(_ input: SecureBytes, keyBytes: UnsafeRawBufferPointer, outputBytes: Int) throws -> SecureBytes {
        guard (16...64).contains(outputBytes), (16...64).contains(keyBytes.count) else {
            throw KeychainError.param("internal: BLAKE2b output and key must be 16 to 64 bytes")
        }
        let out = try SecureBytes(count: outputBytes)
        let rc = out.withUnsafeMutableBytes { o in o.withNonNullBytes { op in
            input.withUnsafeBytes { i in i.withNonNullBytes { ip in
                keyBytes.withNonNullBytes { kp in
                    crypto_generichash(op, o.count, ip, UInt64(i.count), kp, keyBytes.count)
                }
            } }
        } }
        guard rc == 0 else {
            throw KeychainError.notAvailable("libsodium could not hash: reinstall libsodium23 and try again")
        }
        return out
    }
}
