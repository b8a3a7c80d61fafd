// X25519 key pairs for libsodium sealed boxes (`crypto_box_*`): the class, presence and
// current-set keys that gated blobs are sealed to. The private half lives in locked
// memory (SecureBytes); key ids are a keyed BLAKE2b of the public half (GenericHash).
internal import CSodium

/// An X25519 key pair for libsodium sealed boxes. The private half is in locked memory.
package struct BoxKeyPair: Sendable {
    package static let publicKeyBytes = 32
    static let privateKeyBytes = 32
    package static let seedBytes = 32
    package static let keyIDBytes = 8
    private static let keyIDKey: [UInt8] = Array("keygate.box-key-id.v1".utf8)

    package let publicKey: [UInt8]          // 32 bytes
    package let privateKey: SecureBytes     // 32 bytes

    /// A fresh random pair. The C function is `crypto_box_keypair(3)`.
    static func generate() throws -> BoxKeyPair {
        try Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        let privateKey = try SecureBytes(count: privateKeyBytes)
        let rc = publicKey.withUnsafeMutableBytes { p in p.withNonNullBytes { pp in
            privateKey.withUnsafeMutableBytes { s in s.withNonNullBytes { sp in crypto_box_keypair(pp, sp) } }
        } }
        guard rc == 0 else { throw failure("generate") }
        return BoxKeyPair(publicKey: publicKey, privateKey: privateKey)
    }

    /// The pair a 32-byte seed determines. The C function is `crypto_box_seed_keypair(3)`.
    package static func derive(seed: SecureBytes) throws -> BoxKeyPair {
        guard seed.count == seedBytes else {
            throw KeychainError.param("internal: an X25519 seed must be \(seedBytes) bytes, not \(seed.count)")
        }
        try Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: publicKeyBytes)
        let privateKey = try SecureBytes(count: privateKeyBytes)
        let rc = publicKey.withUnsafeMutableBytes { p in p.withNonNullBytes { pp in
            privateKey.withUnsafeMutableBytes { s in s.withNonNullBytes { sp in
                seed.withUnsafeBytes { d in d.withNonNullBytes { dp in crypto_box_seed_keypair(pp, sp, dp) } }
            } }
        } }
        guard rc == 0 else { throw failure("derive") }
        return BoxKeyPair(publicKey: publicKey, privateKey: privateKey)
    }

    /// The pair a seed determines, given its public half already (known from an earlier
    /// derivation): the private half is crypto_box_seed_keypair(3)'s, the first 32 bytes of
    /// SHA-512(seed), without the X25519 base-point multiplication that makes the public half.
    /// The caller checks the public half (its key id against a blob's header): a wrong one
    /// opens nothing.
    package static func derive(seed: SecureBytes, knownPublicKey publicKey: [UInt8]) throws -> BoxKeyPair {
        guard seed.count == seedBytes, publicKey.count == publicKeyBytes else {
            throw KeychainError.param("internal: an X25519 seed and public key must be \(seedBytes) and \(publicKeyBytes) bytes")
        }
        try Sodium.ensureInitialized()
        let hash = try SecureBytes(count: 64)
        let rc = hash.withUnsafeMutableBytes { h in h.withNonNullBytes { hp in
            seed.withUnsafeBytes { d in d.withNonNullBytes { dp in crypto_hash_sha512(hp, dp, UInt64(seedBytes)) } }
        } }
        guard rc == 0 else { throw failure("derive") }
        return BoxKeyPair(publicKey: publicKey, privateKey: try hash.slice(from: 0, length: privateKeyBytes))
    }

    /// Rebuilds a pair from a stored private key, recomputing the public half.
    /// The C function is `crypto_scalarmult_base(3)`.
    package init(privateKey: SecureBytes) throws {
        guard privateKey.count == Self.privateKeyBytes else {
            throw KeychainError.param("internal: an X25519 private key must be \(Self.privateKeyBytes) bytes, not \(privateKey.count)")
        }
        try Sodium.ensureInitialized()
        var publicKey = [UInt8](repeating: 0, count: Self.publicKeyBytes)
        let rc = publicKey.withUnsafeMutableBytes { p in p.withNonNullBytes { pp in
            privateKey.withUnsafeBytes { s in s.withNonNullBytes { sp in crypto_scalarmult_base(pp, sp) } }
        } }
        guard rc == 0 else { throw Self.failure("rebuild") }
        self.init(publicKey: publicKey, privateKey: privateKey)
    }

    private init(publicKey: [UInt8], privateKey: SecureBytes) {
        self.publicKey = publicKey
        self.privateKey = privateKey
    }

    /// 8 bytes that name this pair in a gated blob's header.
    package var keyID: [UInt8] { Self.keyID(of: publicKey) }

    /// 8 bytes: the prefix of a keyed BLAKE2b of the public key. Names a key; reveals nothing secret.
    package static func keyID(of publicKey: [UInt8]) -> [UInt8] {
        Array(GenericHash.publicDigest(publicKey, key: keyIDKey, outputBytes: 16).prefix(keyIDBytes))
    }

    private static func failure(_ action: String) -> KeychainError {
        .notAvailable("libsodium could not \(action) an X25519 key pair: reinstall libsodium23 and try again")
    }
}
