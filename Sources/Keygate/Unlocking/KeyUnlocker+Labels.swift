// A gated item's label, sealed so that the store's file holds no plaintext of it: a gated blob
// with no gate slot (GatedBlob, the class box only), to the item's class public key, bound to an
// identity of its own (`labelIdentity`), so it opens in no other place and a secret's blob never
// opens as a label. Sealing needs the class public key only (a locked keychain seals as a gated
// add does); opening needs the class pair from what the kernel keyring holds now, never a prompt,
// never a person: a listing shows the label while the keychain is unlocked, as the Secret Service
// daemon shows a client's gated label.
//
// Delegates: the crypto to KeygateCore's GatedBlob, the keys to KeySource.
internal import KeygateGateWire

extension KeyUnlocker {
    /// `label` sealed for `attributes`' item, to its class public key (an unlock when the keychain
    /// has never recorded one, as `sealGated`).
    func sealLabel(_ label: String, of attributes: ItemAttributes) throws -> Unlocked<[UInt8]> {
        try sealedClassKey(for: attributes.accessibility).map { classKey in
            var bytes = Array(label.utf8)
            return try GatedBlob.seal(try SecureBytes(consuming: &bytes), identity: Self.labelIdentity(attributes.identity),
                                      accessibility: attributes.accessibility, accessControl: 0, classKey: classKey.publicKey,
                                      gates: [], combination: .all)
        }
    }

    /// The label `sealed` holds for the item of `attributes`, opened with the cached class pair;
    /// nil while that pair is not cached (the keychain is locked), or when the bytes do not open
    /// for this item (moved from another, or damaged): never a prompt.
    func openLabel(_ sealed: [UInt8], of attributes: ItemAttributes) -> String? {
        guard let pair = source.cachedClassKeyPair(for: attributes.accessibility) else { return nil }
        let opened: SecureBytes
        do {
            // A blob with a gate slot is a secret, not a label: it never opens here.
            guard try GatedBlob.header(of: sealed).gateSlots.isEmpty else { return nil }
            opened = try GatedBlob.open(sealed, identity: Self.labelIdentity(attributes.identity), keys: [pair])
        } catch {
            return nil
        }
        return opened.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// The identity a label is sealed to: its item's name (the bytes a secret is bound to), as hex,
    /// under a service no item of Keygate's has.
    static func labelIdentity(_ identity: ItemIdentity) -> ItemIdentity {
        let digits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        for byte in identity.canonicalBytes { hex += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return .generic(service: "io.keygate.label", account: String(decoding: hex, as: UTF8.self))
    }
}
