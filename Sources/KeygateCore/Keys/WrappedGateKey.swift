// A gate private key (presence or current-set, BoxKeyPair) wrapped inside the login
// protector: XChaCha20-Poly1305 (AEAD) under a subkey (Subkey, context "KGgatewr", id =
// the gate kind) of the same Argon2id output that wraps the master key. One password
// derivation unlocks everything; the master key alone opens none of these.
struct WrappedGateKey: Codable, Sendable, Equatable {
    static let wrappingContext = "KGgatewr"
    private static let associatedDataPrefix: [UInt8] = Array("keygate.gate-key.v1".utf8)

    /// Base64 of the X25519 public key (also part of the associated data).
    var publicKey: String
    var nonce: String
    var wrapped: String

    static func wrap(_ pair: BoxKeyPair, kind: GateKind, passwordKey: SecureBytes, masterKeyID: String) throws -> WrappedGateKey {
        let key = try wrappingKey(passwordKey: passwordKey, kind: kind)
        let nonce = AEAD.randomNonce()
        let sealed = try AEAD.seal(pair.privateKey, associatedData: associatedData(kind: kind, masterKeyID: masterKeyID, publicKey: pair.publicKey),
                                   nonce: nonce, key: key)
        return WrappedGateKey(publicKey: Base64Text.encode(pair.publicKey), nonce: Base64Text.encode(nonce),
                              wrapped: Base64Text.encode(sealed))
    }

    /// The key pair, or nil when `passwordKey` is not the right one. A pair whose private half
    /// does not match its recorded public half is .decode (a tampered file).
    func unwrap(kind: GateKind, passwordKey: SecureBytes, masterKeyID: String, path: String) throws -> BoxKeyPair? {
        let publicKey = try publicKeyBytes(path: path)
        guard let nonce = Base64Text.decode(nonce), nonce.count == AEAD.nonceBytes,
              let wrapped = Base64Text.decode(wrapped), wrapped.count == BoxKeyPair.privateKeyBytes + AEAD.tagBytes else {
            throw Protector.corrupt(path)
        }
        let key = try Self.wrappingKey(passwordKey: passwordKey, kind: kind)
        let associatedData = Self.associatedData(kind: kind, masterKeyID: masterKeyID, publicKey: publicKey)
        guard let privateKey = try AEAD.open(ArraySlice(wrapped), associatedData: associatedData,
                                             nonce: ArraySlice(nonce), key: key) else {
            return nil
        }
        let pair = try BoxKeyPair(privateKey: privateKey)
        guard pair.publicKey == publicKey else {
            throw KeychainError.decode("""
                \(path) holds a \(Self.name(kind)) key whose halves do not match: it is corrupt; restore it from a backup, or \
                unlock with the recovery key and run `keygate passwd`
                """)
        }
        return pair
    }

    func publicKeyBytes(path: String) throws -> [UInt8] {
        guard let bytes = Base64Text.decode(publicKey), bytes.count == BoxKeyPair.publicKeyBytes else { throw Protector.corrupt(path) }
        return bytes
    }

    /// As the protector that holds it writes it (Protector.encoded).
    var jsonValue: JSONValue {
        .object(["publicKey": .string(publicKey), "nonce": .string(nonce), "wrapped": .string(wrapped)])
    }

    static func name(_ kind: GateKind) -> String {
        switch kind {
        case .accessClass: return "class"
        case .presence: return "presence"
        case .currentSet: return "current-set"
        case .device: return "device"
        case .enrolledSet: return "enrolled-set"
        }
    }

    private static func wrappingKey(passwordKey: SecureBytes, kind: GateKind) throws -> SecureBytes {
        try Subkey.derive(from: passwordKey, id: UInt64(kind.rawValue), context: wrappingContext, bytes: AEAD.keyBytes)
    }

    private static func associatedData(kind: GateKind, masterKeyID: String, publicKey: [UInt8]) -> [UInt8] {
        // NUL separators keep the fields unambiguous (the public key is fixed-length and last).
        associatedDataPrefix + [0] + Array(name(kind).utf8) + [0] + Array(masterKeyID.utf8) + [0] + publicKey
    }
}

// The memberwise initializer stays: this one is in an extension.
extension WrappedGateKey {
    /// Read by hand with the protector that holds it (Protector.decode, KeyFileJSON).
    init(members: KeyFileJSON.Members) throws(KeyFileJSON.Malformed) {
        self.init(publicKey: try members.string("publicKey"), nonce: try members.string("nonce"), wrapped: try members.string("wrapped"))
    }
}
