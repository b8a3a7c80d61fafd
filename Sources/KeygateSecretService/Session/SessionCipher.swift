// The cryptography of the Secret Service's `dh-ietf1024-sha256-aes128-cbc-pkcs7` session, all
// of it OpenSSL's libcrypto (Sources/CCrypto, loaded on first use), none of it written here:
// Diffie-Hellman in RFC 2409's 1024-bit MODP group (generator 2), the shared secret padded to
// the prime's 128 bytes, HKDF-SHA256 with no salt and no info down to a 16-byte AES key, and
// AES-128-CBC with PKCS#7 padding and a fresh 16-byte IV for each secret sent. The key lives in
// locked memory (SecureBytes); so do the shared secret and every plaintext. Why libcrypto:
// docs/DECISIONS.md, "The Secret Service's session cryptography".
import Keygate
import KeygateCore
internal import CCrypto

package enum SessionCipher {
    /// RFC 2409, section 6.2: the Second Oakley Group's prime, big-endian.
    static let prime: [UInt8] = hex("""
        FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD\
        EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED\
        EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF
        """)
    static let primeBytes = 128
    package static let keyBytes = 16
    package static let blockBytes = 16

    /// Why a session could not be opened or a secret not be carried.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    /// The server's half of the exchange: its public key (128 bytes, big-endian) for the client,
    /// and the AES key both ends now hold. `privateKey`: tests only (a known exchange); nil draws one.
    package static func exchange(clientPublicKey: [UInt8], privateKey: [UInt8]? = nil) throws -> (publicKey: [UInt8], key: SecureBytes) {
        if let why = kg_crypto_load_error() {
            throw Failure(description: String(cString: why) + ": the dh-ietf1024 session needs OpenSSL's libcrypto (apt-get install libssl3)")
        }
        guard !clientPublicKey.isEmpty, clientPublicKey.count <= primeBytes else {
            throw Failure(description: "the client's public key is \(clientPublicKey.count) bytes; a 1024-bit group's is 1 to 128")
        }
        guard let dh = DH_new() else { throw Failure(description: "libcrypto could not allocate a DH context") }
        defer { DH_free(dh) }
        guard let p = BN_bin2bn(prime, Int32(prime.count), nil), let g = BN_bin2bn([2], 1, nil) else {
            throw Failure(description: "libcrypto could not allocate the group")
        }
        guard DH_set0_pqg(dh, p, nil, g) == 1 else {
            BN_clear_free(p)
            BN_clear_free(g)
            throw Failure(description: "libcrypto refused the group")
        }
        if let privateKey {
            guard let secret = BN_bin2bn(privateKey, Int32(privateKey.count), nil), let placeholder = BN_bin2bn([1], 1, nil) else {
                throw Failure(description: "libcrypto could not read the private key")
            }
            // DH_generate_key computes the public key from a private key already set.
            guard DH_set0_key(dh, placeholder, secret) == 1 else {
                BN_clear_free(secret)
                BN_clear_free(placeholder)
                throw Failure(description: "libcrypto refused the private key")
            }
        }
        guard DH_generate_key(dh) == 1 else { throw Failure(description: "libcrypto could not make a DH key") }
        var ownPublic: OpaquePointer?
        DH_get0_key(dh, &ownPublic, nil)
        guard let ownPublic else { throw Failure(description: "libcrypto made no public key") }
        var publicKey = [UInt8](repeating: 0, count: primeBytes)
        guard BN_bn2binpad(ownPublic, &publicKey, Int32(primeBytes)) == Int32(primeBytes) else {
            throw Failure(description: "libcrypto could not write the public key")
        }
        guard let peer = BN_bin2bn(clientPublicKey, Int32(clientPublicKey.count), nil) else {
            throw Failure(description: "libcrypto could not read the client's public key")
        }
        defer { BN_clear_free(peer) }
        let shared = try SecureBytes(count: primeBytes)
        let computed = shared.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return DH_compute_key_padded(base.assumingMemoryBound(to: UInt8.self), peer, dh)
        }
        // libcrypto refuses a public key outside (1, p-1) and one of a small subgroup.
        guard computed == Int32(primeBytes) else {
            throw Failure(description: "the client's public key is not a valid key of the 1024-bit group")
        }
        return (publicKey, try hkdf(shared))
    }

    /// HKDF-SHA256 (RFC 5869) of `secret` with no salt and no info, to a 16-byte key.
    static func hkdf(_ secret: SecureBytes) throws -> SecureBytes {
        guard let ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, nil) else { throw Failure(description: "libcrypto has no HKDF") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_derive_init(ctx) > 0, EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 else {
            throw Failure(description: "libcrypto could not set up HKDF-SHA256")
        }
        let keyed = secret.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            return EVP_PKEY_CTX_set1_hkdf_key(ctx, base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count))
        }
        guard keyed > 0 else { throw Failure(description: "libcrypto refused the HKDF input") }
        let key = try SecureBytes(count: keyBytes)
        var length = keyBytes
        let derived = key.withUnsafeMutableBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            return EVP_PKEY_derive(ctx, base.assumingMemoryBound(to: UInt8.self), &length)
        }
        guard derived > 0, length == keyBytes else { throw Failure(description: "libcrypto's HKDF failed") }
        return key
    }

    /// AES-128-CBC as libcrypto's default provider implements it, fetched once: handing
    /// `EVP_aes_128_cbc()` to each Init makes libcrypto look the implementation up again (a
    /// locked search of its method store) on every secret sent or received. nil when the fetch
    /// fails; then each Init looks the implementation up itself.
    private static let aes128CBC = FetchedCipher()

    /// `plaintext` under `key`: (the IV, the ciphertext).
    package static func encrypt(_ plaintext: SecureBytes, key: SecureBytes) throws -> (iv: [UInt8], ciphertext: [UInt8]) {
        let iv = Sodium.randomBytes(blockBytes)
        guard let ctx = EVP_CIPHER_CTX_new() else { throw Failure(description: "libcrypto could not allocate a cipher") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: plaintext.count + blockBytes)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = key.withUnsafeBytes { keyBuffer in
            plaintext.withUnsafeBytes { input -> Bool in
                guard let keyBase = keyBuffer.baseAddress else { return false }
                guard EVP_EncryptInit_ex(ctx, aes128CBC.cipher ?? EVP_aes_128_cbc(), nil, keyBase.assumingMemoryBound(to: UInt8.self), iv) == 1 else {
                    return false
                }
                let empty: UInt8 = 0
                let ok = withUnsafePointer(to: empty) { fallback in
                    EVP_EncryptUpdate(ctx, &out, &written, input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback,
                                      Int32(input.count)) == 1
                }
                guard ok else { return false }
                return out.withUnsafeMutableBufferPointer { buffer in
                    guard let base = buffer.baseAddress else { return false }
                    return EVP_EncryptFinal_ex(ctx, base + Int(written), &tail) == 1
                }
            }
        }
        guard ok else { throw Failure(description: "libcrypto could not encrypt the secret") }
        return (iv, Array(out.prefix(Int(written + tail))))
    }

    /// The plaintext of `ciphertext` under `key` and `iv`; a Failure for a wrong IV length, a
    /// length that is not whole blocks, or padding that does not check.
    package static func decrypt(_ ciphertext: [UInt8], iv: [UInt8], key: SecureBytes) throws -> SecureBytes {
        guard iv.count == blockBytes else { throw Failure(description: "the secret's parameters are \(iv.count) bytes, not a 16-byte IV") }
        guard !ciphertext.isEmpty, ciphertext.count % blockBytes == 0 else {
            throw Failure(description: "the encrypted secret is \(ciphertext.count) bytes, not whole 16-byte blocks")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw Failure(description: "libcrypto could not allocate a cipher") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        let out = try SecureBytes(count: ciphertext.count + blockBytes)
        var written: Int32 = 0
        var tail: Int32 = 0
        let ok = key.withUnsafeBytes { keyBuffer in
            out.withUnsafeMutableBytes { output -> Bool in
                guard let keyBase = keyBuffer.baseAddress, let outBase = output.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
                    return false
                }
                guard EVP_DecryptInit_ex(ctx, aes128CBC.cipher ?? EVP_aes_128_cbc(), nil, keyBase.assumingMemoryBound(to: UInt8.self), iv) == 1,
                      EVP_DecryptUpdate(ctx, outBase, &written, ciphertext, Int32(ciphertext.count)) == 1 else { return false }
                return EVP_DecryptFinal_ex(ctx, outBase + Int(written), &tail) == 1
            }
        }
        guard ok else { throw Failure(description: "the encrypted secret does not decrypt under this session's key (bad padding)") }
        return try out.slice(from: 0, length: Int(written + tail))
    }

    /// The fetched cipher, kept for the life of the process (libcrypto's method objects are
    /// reference-counted and safe to share between threads once fetched).
    private final class FetchedCipher: @unchecked Sendable {
        let cipher: OpaquePointer?
        init() { cipher = EVP_CIPHER_fetch(nil, "AES-128-CBC", nil) }
    }

    private static func hex(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var high: UInt8?
        for c in text.utf8 {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: continue
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return out
    }
}
