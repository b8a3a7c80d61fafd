// XChaCha20-Poly1305 (libsodium's `crypto_aead_xchacha20poly1305_ietf_*`): the one
// authenticated cipher Keygate uses, for sealed item blobs and for wrapped master
// keys. Plaintext is read from and decrypted straight into locked memory.
internal import CSodium

enum AEAD {
    static let keyBytes = 32
    static let nonceBytes = 24
    static let tagBytes = 16

    /// A fresh random nonce. XChaCha20's 192-bit nonce makes random nonces safe.
    static func randomNonce() -> [UInt8] { Sodium.randomBytes(nonceBytes) }

    /// Encrypts `plaintext` and returns ciphertext followed by the 16-byte tag.
    /// The C function is `crypto_aead_xchacha20poly1305_ietf_encrypt(3)`.
    static func seal(_ plaintext: SecureBytes, associatedData: [UInt8], nonce: [UInt8], key: SecureBytes) throws -> [UInt8] {
        try checkSizes(nonce: nonce, key: key)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagBytes)
        var outLength: UInt64 = 0
        let rc = out.withUnsafeMutableBytes { c in c.withNonNullBytes { c in
            plaintext.withUnsafeBytes { m in m.withNonNullBytes { mp in
                withInputs(associatedData, nonce[...], key) { adp, adLength, np, kp in
                    crypto_aead_xchacha20poly1305_ietf_encrypt(c, &outLength, mp, UInt64(m.count), adp, adLength, nil, np, kp)
                }
            } }
        } }
        guard rc == 0, outLength == UInt64(out.count) else {
            throw KeychainError.notAvailable("libsodium could not encrypt: reinstall libsodium23 and try again")
        }
        return out
    }

    /// Decrypts `ciphertext` (ciphertext followed by tag) into a new locked buffer, or
    /// returns nil when the tag does not verify (wrong key, wrong associated data, or any
    /// changed byte). The C function is `crypto_aead_xchacha20poly1305_ietf_decrypt(3)`.
    static func open(_ ciphertext: ArraySlice<UInt8>, associatedData: [UInt8], nonce: ArraySlice<UInt8>, key: SecureBytes) throws -> SecureBytes? {
        try checkSizes(nonce: Array(nonce), key: key)
        guard ciphertext.count >= tagBytes else { return nil }
        let plaintext = try SecureBytes(count: ciphertext.count - tagBytes)
        var plainLength: UInt64 = 0
        let rc = plaintext.withUnsafeMutableBytes { m in m.withNonNullBytes { mp in
            ciphertext.withUnsafeBytes { c in c.withNonNullBytes { cp in
                withInputs(associatedData, nonce, key) { adp, adLength, np, kp in
                    crypto_aead_xchacha20poly1305_ietf_decrypt(mp, &plainLength, nil, cp, UInt64(c.count), adp, adLength, np, kp)
                }
            } }
        } }
        guard rc == 0, plainLength == UInt64(plaintext.count) else { return nil }
        return plaintext
    }

    /// What both directions pass to libsodium besides the text: the associated data and its
    /// length, the nonce and the key, as C pointers (never null, even for empty data).
    private static func withInputs(_ associatedData: [UInt8], _ nonce: ArraySlice<UInt8>, _ key: SecureBytes,
                                   _ body: (UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>, UnsafePointer<UInt8>) -> Int32) -> Int32 {
        associatedData.withUnsafeBytes { ad in ad.withNonNullBytes { adp in
            nonce.withUnsafeBytes { n in n.withNonNullBytes { np in
                key.withUnsafeBytes { k in k.withNonNullBytes { kp in body(adp, UInt64(ad.count), np, kp) } }
            } }
        } }
    }

    private static func checkSizes(nonce: [UInt8], key: SecureBytes) throws {
        guard nonce.count == nonceBytes else {
            throw KeychainError.param("internal: an XChaCha20-Poly1305 nonce must be \(nonceBytes) bytes, not \(nonce.count)")
        }
        guard key.count == keyBytes else {
            throw KeychainError.param("internal: an XChaCha20-Poly1305 key must be \(keyBytes) bytes, not \(key.count)")
        }
    }
}
