// Subkeys of a 256-bit key (libsodium's `crypto_kdf_derive_from_key`, BLAKE2b): one
// key, an 8-character context naming the purpose and a numeric id give independent
// keys. Class keys and class key-pair seeds come from the master key this way, and the
// gate-key wrapping keys from the login password's Argon2id output.
internal import CSodium

enum Subkey {
    /// `bytes` (16...64) derived from `key` (32 bytes) for `context` (exactly 8 ASCII
    /// characters) and `id`. The C function is `crypto_kdf_derive_from_key(3)`.
    static func derive(from key: SecureBytes, id: UInt64, context: String, bytes: Int = 32) throws -> SecureBytes {
        guard key.count == Int(crypto_kdf_keybytes()) else {
            throw KeychainError.param("internal: a key to derive subkeys from must be \(crypto_kdf_keybytes()) bytes, not \(key.count)")
        }
        guard context.utf8.count == Int(crypto_kdf_contextbytes()),
              (Int(crypto_kdf_bytes_min())...Int(crypto_kdf_bytes_max())).contains(bytes) else {
            throw KeychainError.param("internal: a subkey context must be \(crypto_kdf_contextbytes()) bytes and a subkey 16 to 64 bytes")
        }
        let subkey = try SecureBytes(count: bytes)
        let rc = subkey.withUnsafeMutableBytes { out in out.withNonNullBytes { outp in
            key.withUnsafeBytes { k in k.withNonNullBytes { kp in
                context.withCString { ctx in crypto_kdf_derive_from_key(outp, out.count, id, ctx, kp) }
            } }
        } }
        guard rc == 0 else {
            throw KeychainError.notAvailable("libsodium could not derive a subkey: reinstall libsodium23 and try again")
        }
        return subkey
    }
}
