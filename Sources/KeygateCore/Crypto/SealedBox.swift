// Anonymous public-key encryption (libsodium's sealed boxes, `crypto_box_seal`): wraps a
// short key to an X25519 public key (BoxKeyPair) so that anyone can seal and only the
// private key's holder can open. Gated blobs seal their key shares this way.
internal import CSodium

package enum SealedBox {
    /// Bytes a sealed box adds to its plaintext: an ephemeral public key and a tag (48).
    static var overhead: Int { Int(crypto_box_sealbytes()) }

    /// Seals `plaintext` to `publicKey`. The C function is `crypto_box_seal(3)`.
    package static func seal(_ plaintext: SecureBytes, to publicKey: [UInt8]) throws -> [UInt8] {
        guard publicKey.count == BoxKeyPair.publicKeyBytes else {
            throw KeychainError.param("internal: an X25519 public key must be \(BoxKeyPair.publicKeyBytes) bytes, not \(publicKey.count)")
        }
        try Sodium.ensureInitialized()
        var out = [UInt8](repeating: 0, count: plaintext.count + overhead)
        let rc = out.withUnsafeMutableBytes { c in c.withNonNullBytes { cp in
            plaintext.withUnsafeBytes { m in m.withNonNullBytes { mp in
                publicKey.withUnsafeBytes { p in p.withNonNullBytes { pp in
                    crypto_box_seal(cp, mp, UInt64(m.count), pp)
                } }
            } }
        } }
        guard rc == 0 else {
            throw KeychainError.notAvailable("libsodium could not seal to a public key: reinstall libsodium23 and try again")
        }
        return out
    }

    /// Opens a sealed box into locked memory, or nil when `pair` is not the recipient or
    /// any byte changed. The C function is `crypto_box_seal_open(3)`.
    package static func open(_ box: ArraySlice<UInt8>, with pair: BoxKeyPair) throws -> SecureBytes? {
        guard box.count >= overhead, pair.publicKey.count == BoxKeyPair.publicKeyBytes,
              pair.privateKey.count == BoxKeyPair.privateKeyBytes else { return nil }
        let plaintext = try SecureBytes(count: box.count - overhead)
        let rc = plaintext.withUnsafeMutableBytes { m in m.withNonNullBytes { mp in
            box.withUnsafeBytes { c in c.withNonNullBytes { cp in
                pair.publicKey.withUnsafeBytes { p in p.withNonNullBytes { pp in
                    pair.privateKey.withUnsafeBytes { s in s.withNonNullBytes { sp in
                        crypto_box_seal_open(mp, cp, UInt64(c.count), pp, sp)
                    } }
                } }
            } }
        } }
        return rc == 0 ? plaintext : nil
    }

    /// Opens a sealed box into an ordinary array, or nil as `open`. For a caller that would
    /// copy the plaintext out of locked memory at once anyway (the gatekeeper's reply, wiped
    /// once written; the daemon's memory is locked whole): one guarded allocation fewer, its
    /// mmap, mprotects and mlock, on every read inside a window. The caller wipes the array.
    package static func openToArray(_ box: ArraySlice<UInt8>, with pair: BoxKeyPair) -> [UInt8]? {
        guard box.count >= overhead, pair.publicKey.count == BoxKeyPair.publicKeyBytes,
              pair.privateKey.count == BoxKeyPair.privateKeyBytes else { return nil }
        var plaintext = [UInt8](repeating: 0, count: box.count - overhead)
        let rc = plaintext.withUnsafeMutableBytes { m in m.withNonNullBytes { mp in
            box.withUnsafeBytes { c in c.withNonNullBytes { cp in
                pair.publicKey.withUnsafeBytes { p in p.withNonNullBytes { pp in
                    pair.privateKey.withUnsafeBytes { s in s.withNonNullBytes { sp in
                        crypto_box_seal_open(mp, cp, UInt64(c.count), pp, sp)
                    } }
                } }
            } }
        } }
        if rc == 0 { return plaintext }
        Sodium.wipe(&plaintext)
        return nil
    }
}
