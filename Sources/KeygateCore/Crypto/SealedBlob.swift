// The versioned sealed blob that Keygate stores in place of an item's secret.
// Layout: magic "KGS" | version | scheme | accessibility code | nonce | ciphertext+tag.
// The cipher is delegated to AEAD (XChaCha20-Poly1305); the associated data binds the
// whole header and the item's identity, so a blob moved to another item fails to open.
// Scheme-2 (access-controlled) blobs share the first six bytes and are read by GatedBlob;
// `header(of:)` reports their version, scheme and accessibility so callers can dispatch.

package enum SealedBlob {
    static let currentVersion: UInt8 = 1
    package static let maxSecretLength = 64 * 1024

    /// Scheme 1: sealed with the symmetric key of the item's accessibility class.
    static let schemeClassKey: UInt8 = 1
    /// Scheme 2: sealed to public keys (libsodium sealed boxes), for access-controlled
    /// items. Written and opened by GatedBlob.
    static let schemeSealedBox: UInt8 = 2

    static let magic: [UInt8] = Array("KGS".utf8)
    /// magic(3) + version + scheme + accessibility + nonce(24).
    static let headerLength = magic.count + 3 + AEAD.nonceBytes

    package struct Header: Sendable, Equatable {
        var version: UInt8
        package var scheme: UInt8
        package var accessibility: Accessibility
    }

    package static func seal(_ secret: SecureBytes, identity: ItemIdentity, accessibility: Accessibility, classKey: SecureBytes) throws -> [UInt8] {
        guard secret.count <= maxSecretLength else {
            throw KeychainError.param("""
                the secret is \(secret.count) bytes; Keygate stores secrets of at most \(maxSecretLength) bytes: store a key to the \
                data instead of the data itself
                """)
        }
        let header = magic + [currentVersion, schemeClassKey, accessibility.blobCode] + AEAD.randomNonce()
        let sealed = try AEAD.seal(secret, associatedData: header + identity.canonicalBytes,
                                   nonce: Array(header[(headerLength - AEAD.nonceBytes)...]), key: classKey)
        return header + sealed
    }

    package static func open(_ blob: [UInt8], identity: ItemIdentity, classKey: SecureBytes) throws -> SecureBytes {
        let parsed = try header(of: blob)
        guard parsed.scheme == schemeClassKey else {
            throw KeychainError.decode("""
                the secret of \(identity.displayName) is access-controlled (sealed to public keys, scheme \(parsed.scheme)) and \
                cannot be opened with a class key alone: read it through the access-control path (GatedBlob), which asks for the \
                authentication it needs
                """)
        }
        guard blob.count >= headerLength + AEAD.tagBytes else { throw cannotOpen(identity) }
        let nonce = blob[(headerLength - AEAD.nonceBytes)..<headerLength]
        let associatedData = Array(blob[0..<headerLength]) + identity.canonicalBytes
        guard let plaintext = try AEAD.open(blob[headerLength...], associatedData: associatedData, nonce: nonce, key: classKey) else {
            throw cannotOpen(identity)
        }
        return plaintext
    }

    /// Reads the header without opening the blob (no key needed).
    package static func header(of blob: [UInt8]) throws -> Header {
        guard blob.count >= magic.count, Array(blob[0..<magic.count]) == magic else {
            throw KeychainError.decode("""
                the stored secret is not a Keygate blob: it was written by another program or is damaged; delete the item and add \
                it again with keygate
                """)
        }
        guard blob.count >= headerLength else {
            throw KeychainError.decode("""
                the stored secret is a truncated Keygate blob (\(blob.count) bytes): it is corrupt; delete the item and add it \
                again, or restore it from a backup
                """)
        }
        let version = blob[3], scheme = blob[4], code = blob[5]
        guard version <= currentVersion else {
            throw KeychainError.decode("""
                the stored secret was made by a newer Keygate (format \(version); this one reads format \(currentVersion)): upgrade \
                keygate
                """)
        }
        guard version >= 1 else {
            throw KeychainError.decode("""
                the stored secret has an invalid format number (0): it is corrupt; delete the item and add it again, or restore it \
                from a backup
                """)
        }
        guard scheme == schemeClassKey || scheme == schemeSealedBox else {
            throw KeychainError.decode("the stored secret was made by a newer Keygate (sealing scheme \(scheme)): upgrade keygate")
        }
        guard let accessibility = Accessibility(blobCode: code) else {
            throw KeychainError.decode("the stored secret was made by a newer Keygate (accessibility code \(code)): upgrade keygate")
        }
        return Header(version: version, scheme: scheme, accessibility: accessibility)
    }

    private static func cannotOpen(_ identity: ItemIdentity) -> KeychainError {
        .decode("""
            the secret of \(identity.displayName) cannot be opened: it is corrupt, was moved from another item, or was sealed \
            by another keychain; delete the item and add it again, or restore it from a backup
            """)
    }
}

extension Accessibility {
    /// The byte recorded in a sealed blob's header. Fixed forever: never renumber.
    package var blobCode: UInt8 {
        switch self {
        case .whenUnlocked: return 1
        case .afterFirstUnlock: return 2
        case .whenPasscodeSetThisDeviceOnly: return 3
        case .whenUnlockedThisDeviceOnly: return 4
        case .afterFirstUnlockThisDeviceOnly: return 5
        }
    }

    package init?(blobCode: UInt8) {
        guard let found = Accessibility.allCases.first(where: { $0.blobCode == blobCode }) else { return nil }
        self = found
    }
}
