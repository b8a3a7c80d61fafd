// A protector: the master key wrapped (XChaCha20-Poly1305, via AEAD) under a key that
// one credential yields: the login password through Argon2id (KDFParameters), or the
// recovery key through keyed BLAKE2b (GenericHash). Stored as versioned JSON, one file
// per protector. A third kind, "host" (HostProtector), wraps it under a key root derives
// from the host key, for service accounts; later kinds ("tpm2") can sit beside them.
// The login (password) protector also carries the presence and current-set private keys
// (WrappedGateKey), wrapped under subkeys of the same Argon2id output; files written
// before those existed simply lack the two fields.
package struct Protector: Codable, Sendable, Equatable {
    enum Kind {
        static let password = "password"
        static let recovery = "recovery"
        /// Wrapped under a key root derives from the host key (HostProtector): service accounts.
        static let host = "host"
    }

    static let currentVersion = 1
    static let saltBytes = 16
    package static let masterKeyBytes = 32
    private static let masterKeyIDKey: [UInt8] = Array("keygate.master-key-id.v1".utf8)
    private static let associatedDataPrefix: [UInt8] = Array("keygate.protector.v1".utf8)
    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    var version: Int
    var kind: String
    /// Hex of a keyed BLAKE2b of the master key: tells protectors of different keys
    /// apart and reveals nothing about the key.
    var masterKeyID: String
    /// The Argon2id cost (password protectors only).
    var kdf: KDFParameters?
    var salt: String
    var nonce: String
    var wrapped: String
    /// Password protectors only: the gate private keys (absent in older files).
    var presence: WrappedGateKey?
    var currentSet: WrappedGateKey?

    static func masterKeyID(of masterKey: SecureBytes) throws -> String {
        let digest = try GenericHash.hash(masterKey, key: masterKeyIDKey, outputBytes: 16)
        // Bytes, not Strings joined: every login computes it, and joining 16 Strings cost more than the hash.
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in digest.unprotectedCopy() {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The wrapping key of a protector whose credential is a random 256-bit key (the recovery
    /// key, the host protector's key): BLAKE2b(key) keyed with the protector's salt.
    static func keyWrappingKey(_ credential: SecureBytes, salt: [UInt8]) throws -> SecureBytes {
        try GenericHash.hash(credential, key: salt, outputBytes: AEAD.keyBytes)
    }

    /// The recovery protector's wrapping key: BLAKE2b(recovery key) keyed with the salt.
    /// A 256-bit random key needs no password hashing.
    static func recoveryWrappingKey(recoveryKey: SecureBytes, salt: [UInt8]) throws -> SecureBytes {
        guard recoveryKey.count == RecoveryKey.keyBytes else {
            throw KeychainError.param("""
                a recovery key is \(RecoveryKey.keyBytes) bytes, not \(recoveryKey.count): pass the parsed key (RecoveryKey.parse)
                """)
        }
        return try GenericHash.hash(recoveryKey, key: salt, outputBytes: AEAD.keyBytes)
    }

    /// Wraps `masterKey` under `wrappingKey`.
    static func wrap(masterKey: SecureBytes, kind: String, wrappingKey: SecureBytes, salt: [UInt8], kdf: KDFParameters?) throws -> Protector {
        guard masterKey.count == masterKeyBytes else {
            throw KeychainError.param("internal: a master key is \(masterKeyBytes) bytes, not \(masterKey.count)")
        }
        let id = try masterKeyID(of: masterKey)
        let nonce = AEAD.randomNonce()
        let wrapped = try AEAD.seal(masterKey, associatedData: associatedData(kind: kind, masterKeyID: id), nonce: nonce, key: wrappingKey)
        return Protector(version: currentVersion, kind: kind, masterKeyID: id, kdf: kdf,
                         salt: Base64Text.encode(salt), nonce: Base64Text.encode(nonce), wrapped: Base64Text.encode(wrapped),
                         presence: nil, currentSet: nil)
    }

    /// The master key, or nil when `wrappingKey` is not the right one.
    func unwrap(with wrappingKey: SecureBytes, path: String) throws -> SecureBytes? {
        guard let nonce = Base64Text.decode(nonce), nonce.count == AEAD.nonceBytes,
              let wrapped = Base64Text.decode(wrapped), wrapped.count == Self.masterKeyBytes + AEAD.tagBytes else {
            throw Self.corrupt(path)
        }
        guard let masterKey = try AEAD.open(ArraySlice(wrapped), associatedData: Self.associatedData(kind: kind, masterKeyID: masterKeyID),
                                            nonce: ArraySlice(nonce), key: wrappingKey) else {
            return nil
        }
        guard try Self.masterKeyID(of: masterKey) == masterKeyID else {
            throw KeychainError.decode("""
                \(path) wraps a different master key than it names: it is corrupt; restore it from a backup, or unlock with another \
                protector and run `keygate passwd`
                """)
        }
        return masterKey
    }

    func saltBytes(path: String) throws -> [UInt8] {
        guard let bytes = Base64Text.decode(salt), bytes.count == Self.saltBytes else { throw Self.corrupt(path) }
        return bytes
    }

    /// The file's bytes, as JSONEncoder wrote them (`[.prettyPrinted, .sortedKeys]`; JSONWriter).
    func encoded() -> [UInt8] {
        var members: [String: JSONValue] = [
            "version": .integer(Int64(version)), "kind": .string(kind), "masterKeyID": .string(masterKeyID),
            "salt": .string(salt), "nonce": .string(nonce), "wrapped": .string(wrapped),
        ]
        if let kdf { members["kdf"] = kdf.jsonValue }
        if let presence { members["presence"] = presence.jsonValue }
        if let currentSet { members["currentSet"] = currentSet.jsonValue }
        return JSONWriter.pretty(.object(members))
    }

    /// Parses a protector file. A future format is a clear .decode; garbage names the file.
    /// By hand (KeyFileJSON), as Codable would read it: every login reads login.json.
    static func decode(_ bytes: [UInt8], path: String) throws -> Protector {
        guard let document = try? KeyFileJSON.parse(bytes), let members = try? KeyFileJSON.Members(document),
              let version = try? members.int("version") else {
            throw corrupt(path)
        }
        guard version <= currentVersion else {
            throw KeychainError.decode("""
                \(path) was written by a newer Keygate (protector format \(version); this one reads format \
                \(currentVersion)): upgrade keygate
                """)
        }
        guard version >= 1, let protector = try? Protector(members), protector.masterKeyID.count == 32 else {
            throw corrupt(path)
        }
        return protector
    }

    private static func associatedData(kind: String, masterKeyID: String) -> [UInt8] {
        // NUL separators keep the fields unambiguous.
        associatedDataPrefix + [0] + Array(kind.utf8) + [0] + Array(masterKeyID.utf8)
    }

    static func corrupt(_ path: String) -> KeychainError {
        .decode("""
            \(path) is not a valid Keygate protector (corrupt or truncated): restore it from a backup; if it is the login \
            protector, unlock with the recovery key (`keygate unlock --recovery`) and run `keygate passwd` to write a new one
            """)
    }
}

// The memberwise initializer stays: this one is in an extension.
extension Protector {
    fileprivate init(_ members: KeyFileJSON.Members) throws(KeyFileJSON.Malformed) {
        self.init(version: try members.int("version"), kind: try members.string("kind"),
                  masterKeyID: try members.string("masterKeyID"),
                  kdf: try members.optionalObject("kdf").map { (kdf: KeyFileJSON.Members) throws(KeyFileJSON.Malformed) in
                      try KDFParameters(algorithm: kdf.string("algorithm"), opsLimit: kdf.unsigned("opsLimit"),
                                        memLimitBytes: kdf.unsigned("memLimitBytes"),
                                        calibratedMilliseconds: kdf.optionalUnsigned("calibratedMilliseconds"))
                  },
                  salt: try members.string("salt"), nonce: try members.string("nonce"), wrapped: try members.string("wrapped"),
                  presence: try members.optionalObject("presence").map(WrappedGateKey.init(members:)),
                  currentSet: try members.optionalObject("currentSet").map(WrappedGateKey.init(members:)))
    }
}
