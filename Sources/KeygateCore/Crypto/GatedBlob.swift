// Scheme-2 sealed blobs, for access-controlled items (docs/ACCESS_CONTROL.md). A random
// content key K = BLAKE2b(k_class || k_gate) encrypts the secret (AEAD, XChaCha20-Poly1305);
// k_class is sealed (SealedBox) to the class public key, and k_gate is sealed to each
// gate recipient (.any) or split into one share per recipient (.all). Anyone can seal
// (public keys only); opening needs the class private key and the gate private key(s).
//
// Layout (all integers big-endian):
//   magic "KGS" | version | scheme 2 | accessibility code | accessControl u32 | combination u8
//   | gate count n u8 | class slot (kind u8, key id 8) | n gate slots (kind u8, key id 8)
//   | sealed k_class (80) | n sealed gate keys or shares (80 each) | nonce (24) | ciphertext+tag
// The AEAD's associated data is everything before the ciphertext plus the item's identity,
// so a changed header, slot, sealed key or a blob moved to another item fails to open.
// Device slots (kind 4) stand outside the combination: each carries a share that is
// always needed, K = BLAKE2b(k_class || k_gate || device shares...). A blob without
// one is byte for byte what Keygate 1.x wrote.

/// What gates a gated blob's content key. Slot kinds (u8): 1 = class, 2 = presence, 3 = current-set
/// (the password's shadow entry), 4 = device (this-device-only: sealed to a key only this host's
/// gatekeeper holds; always required, whatever the combination of the other gates), 5 = enrolled
/// set (biometryCurrentSet: a key bound to the digest of the user's enrolled fingerprints).
package enum GateKind: UInt8, Sendable {
    case accessClass = 1, presence = 2, currentSet = 3, device = 4, enrolledSet = 5

    /// The gate slots an item of these constraints is sealed with: presence for userPresence,
    /// devicePasscode and biometryAny; the enrolled set for biometryCurrentSet; the password's
    /// current set for Keygate's current-set.
    package static func kinds(for constraints: [AccessControl.Constraint]) -> [GateKind] {
        var kinds: [GateKind] = []
        for c in constraints {
            let kind: GateKind
            switch c {
            case .biometryCurrentSet: kind = .enrolledSet
            case .currentSet: kind = .currentSet
            case .userPresence, .devicePasscode, .biometryAny: kind = .presence
            }
            if !kinds.contains(kind) { kinds.append(kind) }
        }
        return kinds
    }
}

/// A key a gated blob's gate share is sealed to.
package struct GateRecipient: Sendable {
    var kind: GateKind
    var publicKey: [UInt8]

    package init(kind: GateKind, publicKey: [UInt8]) {
        self.kind = kind
        self.publicKey = publicKey
    }
}

/// How several gates combine: any one of them opens (or), or all are needed (and).
package enum GateCombination: UInt8, Sendable { case any = 1, all = 2 }

package enum GatedBlob {
    package static let scheme: UInt8 = SealedBlob.schemeSealedBox
    static let version: UInt8 = 1
    package static let maxGates = 16
    package static let contentKeyBytes = 32
    static let slotBytes = 1 + BoxKeyPair.keyIDBytes
    /// magic(3) + version + scheme + accessibility + accessControl(4) + combination + count.
    static let fixedHeaderBytes = SealedBlob.magic.count + 3 + 4 + 2
    package static var boxBytes: Int { contentKeyBytes + SealedBox.overhead }

    private static let contentKeyKey: [UInt8] = Array("keygate.gated-blob.content-key.v1".utf8)
    private static let sharesKey: [UInt8] = Array("keygate.gated-blob.gate-shares.v1".utf8)

    package struct Slot: Sendable, Equatable {
        package var kind: GateKind
        package var keyID: [UInt8]
    }

    package struct Header: Sendable, Equatable {
        var version: UInt8
        package var accessibility: Accessibility
        /// Apple's SecAccessControlCreateFlags bits, recorded as given (opaque here).
        package var accessControl: UInt32
        package var combination: GateCombination
        package var classSlot: Slot
        package var gateSlots: [Slot]

        /// Bytes from the start of the blob to the start of the AEAD ciphertext.
        var length: Int { GatedBlob.headerLength(gates: gateSlots.count) }
    }

    static func headerLength(gates: Int) -> Int {
        fixedHeaderBytes + slotBytes * (gates + 1) + boxBytes * (gates + 1) + AEAD.nonceBytes
    }

    // MARK: - Seal

    package static func seal(_ secret: SecureBytes, identity: ItemIdentity, accessibility: Accessibility, accessControl: UInt32,
                     classKey: [UInt8], gates: [GateRecipient], combination: GateCombination) throws -> [UInt8] {
        guard secret.count <= SealedBlob.maxSecretLength else {
            throw KeychainError.param("""
                the secret is \(secret.count) bytes; Keygate stores secrets of at most \(SealedBlob.maxSecretLength) bytes: store a \
                key to the data instead of the data itself
                """)
        }
        guard gates.count <= maxGates else {
            throw KeychainError.param("an item can have at most \(maxGates) access-control constraints, not \(gates.count): combine fewer flags")
        }
        guard classKey.count == BoxKeyPair.publicKeyBytes,
              gates.allSatisfy({ $0.publicKey.count == BoxKeyPair.publicKeyBytes }) else {
            throw KeychainError.param("internal: gated blobs seal to \(BoxKeyPair.publicKeyBytes)-byte X25519 public keys")
        }
        guard !gates.contains(where: { $0.kind == .accessClass }) else {
            throw KeychainError.param("internal: the class key is a blob's class slot, not one of its gates")
        }

        // Device slots go last, so a blob's slot order is its boxes' order.
        let gates = gates.filter { $0.kind != .device } + gates.filter { $0.kind == .device }
        let combined = gates.filter { $0.kind != .device }
        let classShare = try SecureBytes.random(count: contentKeyBytes)
        var boxes = try SealedBox.seal(classShare, to: classKey)
        let gateKey: SecureBytes?
        if combined.isEmpty {
            gateKey = nil
        } else if combination == .any {
            let key = try SecureBytes.random(count: contentKeyBytes)
            for gate in combined { boxes += try SealedBox.seal(key, to: gate.publicKey) }
            gateKey = key
        } else {
            var shares: [SecureBytes] = []
            for gate in combined {
                let share = try SecureBytes.random(count: contentKeyBytes)
                boxes += try SealedBox.seal(share, to: gate.publicKey)
                shares.append(share)
            }
            gateKey = try combine(shares)
        }
        var deviceShares: [SecureBytes] = []
        for gate in gates where gate.kind == .device {
            let share = try SecureBytes.random(count: contentKeyBytes)
            boxes += try SealedBox.seal(share, to: gate.publicKey)
            deviceShares.append(share)
        }
        let contentKey = try self.contentKey(classShare: classShare, gateKey: gateKey, deviceShares: deviceShares)

        var header = SealedBlob.magic + [version, scheme, accessibility.blobCode]
        header += [UInt8(accessControl >> 24), UInt8((accessControl >> 16) & 0xff),
                   UInt8((accessControl >> 8) & 0xff), UInt8(accessControl & 0xff)]
        header += [combination.rawValue, UInt8(gates.count)]
        header += [GateKind.accessClass.rawValue] + BoxKeyPair.keyID(of: classKey)
        for gate in gates { header += [gate.kind.rawValue] + BoxKeyPair.keyID(of: gate.publicKey) }
        let nonce = AEAD.randomNonce()
        header += boxes + nonce
        let sealed = try AEAD.seal(secret, associatedData: header + identity.canonicalBytes, nonce: nonce, key: contentKey)
        return header + sealed
    }

    // MARK: - Header

    /// Reads the header without opening the blob (no key needed).
    package static func header(of blob: [UInt8]) throws -> Header {
        let common = try SealedBlob.header(of: blob)
        guard common.scheme == scheme else {
            throw KeychainError.decode("""
                internal: the stored secret is a scheme-\(common.scheme) blob, not an access-controlled (scheme \(scheme)) one; \
                read it with the class key
                """)
        }
        guard blob.count >= fixedHeaderBytes else { throw truncated(blob.count) }
        let accessControl = UInt32(blob[6]) << 24 | UInt32(blob[7]) << 16 | UInt32(blob[8]) << 8 | UInt32(blob[9])
        guard let combination = GateCombination(rawValue: blob[10]) else {
            throw KeychainError.decode("""
                the stored secret combines its access-control constraints in a way this Keygate does not know (code \(blob[10])): \
                upgrade keygate
                """)
        }
        let count = Int(blob[11])
        guard count <= maxGates else {
            throw KeychainError.decode("""
                the stored secret claims \(count) access-control constraints, more than any Keygate writes: it is corrupt; delete \
                the item and add it again, or restore it from a backup
                """)
        }
        guard blob.count >= headerLength(gates: count) + AEAD.tagBytes else { throw truncated(blob.count) }
        var slots: [Slot] = []
        for index in 0...count {
            let start = fixedHeaderBytes + index * slotBytes
            guard let kind = GateKind(rawValue: blob[start]) else {
                throw KeychainError.decode("""
                    the stored secret is gated by a kind of key this Keygate does not know (kind \(blob[start])): upgrade keygate
                    """)
            }
            guard (index == 0) == (kind == .accessClass) else {
                throw KeychainError.decode("""
                    the stored secret's key slots are out of order: it is corrupt; delete the item and add it again, or restore it from \
                    a backup
                    """)
            }
            slots.append(Slot(kind: kind, keyID: Array(blob[(start + 1)..<(start + slotBytes)])))
        }
        return Header(version: common.version, accessibility: common.accessibility, accessControl: accessControl,
                      combination: combination, classSlot: slots[0], gateSlots: Array(slots.dropFirst()))
    }

    // MARK: - Open

    /// keys: the key pairs the caller could unlock (class pair + any gate pairs). .decode when the keys do not
    /// open it (wrong/missing key, moved blob, corrupt). The caller checks key ids against the header first to
    /// tell "invalidated" from "corrupt".
    package static func open(_ blob: [UInt8], identity: ItemIdentity, keys: [BoxKeyPair]) throws -> SecureBytes {
        try open(blob, identity: identity, keys: keys, shares: [])
    }

    /// The sealed box of gate slot `index` (0-based among the gate slots), for the gatekeeper.
    package static func gateBox(_ blob: [UInt8], header: Header, index: Int) -> [UInt8] {
        let start = fixedHeaderBytes + slotBytes * (header.gateSlots.count + 1) + (index + 1) * boxBytes
        return Array(blob[start..<(start + boxBytes)])
    }

    /// The share in the class box, opened with `pair` (nil when `pair` is not the class's or the
    /// box does not open): a read opens it while the gatekeeper works on the gate boxes.
    package static func classShare(of blob: [UInt8], header: Header, pair: BoxKeyPair) throws -> SecureBytes? {
        let start = fixedHeaderBytes + slotBytes * (header.gateSlots.count + 1)
        guard blob.count >= start + boxBytes else { return nil }
        return try openBox(blob[start..<(start + boxBytes)], slot: header.classSlot, keys: [pair])
    }

    /// Opens with the class pair in `keys` (or the class box's share already opened,
    /// `classShare`) and, per gate slot index, either a pair in `keys` or a share the
    /// gatekeeper already opened (`shares[index]`).
    package static func open(_ blob: [UInt8], identity: ItemIdentity, keys: [BoxKeyPair], shares: [SecureBytes?],
                     classShare opened: SecureBytes? = nil) throws -> SecureBytes {
        let header = try header(of: blob)
        let boxesStart = fixedHeaderBytes + slotBytes * (header.gateSlots.count + 1)
        func box(_ index: Int) -> ArraySlice<UInt8> {
            blob[(boxesStart + index * boxBytes)..<(boxesStart + (index + 1) * boxBytes)]
        }
        func share(_ index: Int, _ slot: Slot) throws -> SecureBytes? {
            if index < shares.count, let given = shares[index], given.count == contentKeyBytes { return given }
            return try openBox(box(index + 1), slot: slot, keys: keys)
        }
        let given = opened.flatMap { $0.count == contentKeyBytes ? $0 : nil }
        guard let classShare = try given ?? openBox(box(0), slot: header.classSlot, keys: keys) else {
            throw cannotOpen(identity, "its class key")
        }
        let combined = header.gateSlots.enumerated().filter { $0.element.kind != .device }
        var gateKey: SecureBytes?
        if !combined.isEmpty {
            switch header.combination {
            case .any:
                for (index, slot) in combined {
                    if let key = try share(index, slot) { gateKey = key; break }
                }
                guard gateKey != nil else { throw cannotOpen(identity, "any of its access-control keys") }
            case .all:
                var parts: [SecureBytes] = []
                for (index, slot) in combined {
                    guard let part = try share(index, slot) else {
                        throw cannotOpen(identity, "all of its access-control keys")
                    }
                    parts.append(part)
                }
                gateKey = try combine(parts)
            }
        }
        var deviceShares: [SecureBytes] = []
        for (index, slot) in header.gateSlots.enumerated() where slot.kind == .device {
            guard let part = try share(index, slot) else { throw cannotOpen(identity, "this host's device key") }
            deviceShares.append(part)
        }
        let contentKey = try self.contentKey(classShare: classShare, gateKey: gateKey, deviceShares: deviceShares)
        let length = header.length
        let associatedData = Array(blob[0..<length]) + identity.canonicalBytes
        guard let plaintext = try AEAD.open(blob[length...], associatedData: associatedData,
                                            nonce: blob[(length - AEAD.nonceBytes)..<length], key: contentKey) else {
            throw cannotOpen(identity, nil)
        }
        return plaintext
    }

    // MARK: - Implementation

    /// Tries each given pair whose key id matches the slot.
    private static func openBox(_ box: ArraySlice<UInt8>, slot: Slot, keys: [BoxKeyPair]) throws -> SecureBytes? {
        for pair in keys where pair.keyID == slot.keyID {
            if let opened = try SealedBox.open(box, with: pair), opened.count == contentKeyBytes { return opened }
        }
        return nil
    }

    /// K = BLAKE2b(k_class || k_gate || device shares), keyed for this purpose.
    private static func contentKey(classShare: SecureBytes, gateKey: SecureBytes?, deviceShares: [SecureBytes]) throws -> SecureBytes {
        try GenericHash.hash(concatenate([classShare] + (gateKey.map { [$0] } ?? []) + deviceShares),
                             key: contentKeyKey, outputBytes: AEAD.keyBytes)
    }

    /// k_gate = BLAKE2b(share1 || share2 ...), keyed for this purpose.
    private static func combine(_ shares: [SecureBytes]) throws -> SecureBytes {
        try GenericHash.hash(concatenate(shares), key: sharesKey, outputBytes: contentKeyBytes)
    }

    private static func concatenate(_ parts: [SecureBytes]) throws -> SecureBytes {
        let out = try SecureBytes(count: parts.reduce(0) { $0 + $1.count })
        out.withUnsafeMutableBytes { dst in
            var offset = 0
            for part in parts {
                part.withUnsafeBytes { src in
                    if let base = dst.baseAddress, let from = src.baseAddress, src.count > 0 {
                        (base + offset).copyMemory(from: from, byteCount: src.count)
                    }
                }
                offset += part.count
            }
        }
        return out
    }

    private static func truncated(_ count: Int) -> KeychainError {
        .decode("""
            the stored secret is a truncated access-controlled Keygate blob (\(count) bytes): it is corrupt; delete the item \
            and add it again, or restore it from a backup
            """)
    }

    private static func cannotOpen(_ identity: ItemIdentity, _ missing: String?) -> KeychainError {
        if let missing {
            return .decode("""
                the secret of \(identity.displayName) cannot be opened: the keys given do not include \(missing) (the item may have \
                been invalidated by a password or device change), or it is corrupt; delete the item and add it again
                """)
        }
        return .decode("""
            the secret of \(identity.displayName) cannot be opened: it is corrupt, was moved from another item, or was sealed \
            by another keychain; delete the item and add it again, or restore it from a backup
            """)
    }
}
