// What one read needs, worked out as a value from the stored item and its policy decision
// alone: which key opens the item's class box, which of its gate boxes the gatekeeper must
// open, and whether the policy's floor asks for more than the item was sealed with. No cache,
// key store or gatekeeper is asked here (nothing to fake in a test). It lives beside the
// unlocker that satisfies it, so that Unlocking/ names nothing of Operations/; the read (in
// Operations/) builds it. A read is one arrow down:
//
//   the policy decision → one fetch → ReadNeed (here) → KeyUnlocker.satisfy (ReadUnlock)
//   → ReadNeed.open (crypto) → the follow-ups owed (KeychainOperations.settle)
//
// Tampering is refused here, before any prompt: what the blob was sealed with decides, never
// the stored attribute (which any process of the user can rewrite).

struct ReadNeed: Sendable {
    let identity: ItemIdentity
    /// The sealed blob to open.
    let blob: [UInt8]
    /// The class the blob was sealed to.
    let accessibility: Accessibility
    /// How the blob is sealed: to a class key alone (scheme 1), or to a class pair and gate keys.
    let seal: Seal
    /// The presence a policy floor (`minimum-access`) asks for on top of what the item was
    /// sealed with (an item added before the floor); nil when the item's own access decides.
    let floor: AccessControl?

    enum Seal: Sendable {
        /// Scheme 1: the class key, from the master key or an after-first-unlock cache.
        case classKey
        /// Scheme 2: the class pair opens the class box; the gatekeeper opens `slots`.
        case gated(GatedBlob.Header, slots: [Int])
    }

    /// The need of `item` (the item with exactly `identity`) under its policy `decision`.
    /// Throws .decode for an item whose blob is missing or does not match its attributes.
    init(item: StoredItem, identity: ItemIdentity, decision: PolicyDecision) throws {
        guard let blob = item.blob else {
            throw KeychainError.decode("the item \(identity.displayName) has no secret in the store: delete it and add it again")
        }
        let sealed = try Self.sealedAccess(of: item, identity: identity)
        let (accessibility, seal) = try Self.parse(blob)
        guard accessibility == item.attributes.accessibility else {
            throw KeychainError.decode("""
                the item \(identity.displayName) was tampered with: its accessibility attribute does not match its sealed blob; \
                delete it and add it again
                """)
        }
        self.identity = identity
        self.blob = blob
        self.accessibility = accessibility
        self.seal = seal
        if let required = decision.minimumAccess, AccessControl.stricter(sealed, required) != sealed {
            floor = required
        } else {
            floor = nil
        }
    }

    /// The need of `blob` alone, with no floor: a blob the 1.x migration just sealed again
    /// (KeyUnlocker.satisfy), which carries the item's own flags.
    init(identity: ItemIdentity, blob: [UInt8]) throws {
        self.identity = identity
        self.blob = blob
        (accessibility, seal) = try Self.parse(blob)
        floor = nil
    }

    private static func parse(_ blob: [UInt8]) throws -> (Accessibility, Seal) {
        let header = try SealedBlob.header(of: blob)
        guard header.scheme == GatedBlob.scheme else { return (header.accessibility, .classKey) }
        let gated = try GatedBlob.header(of: blob)
        return (header.accessibility, .gated(gated, slots: slotsToOpen(gated)))
    }

    /// The access control `item`'s blob was sealed with (nil = none), which decides. Throws
    /// .decode when the stored attribute calls a gated blob open, or an open blob gated: another
    /// process rewrote it, or put another blob there. (Where both are gated and the details
    /// differ, as in Keygate 1.x's test vectors, the blob's flags are what the gatekeeper holds.)
    static func sealedAccess(of item: StoredItem, identity: ItemIdentity) throws -> AccessControl? {
        guard let blob = item.blob else { return item.attributes.accessControl }
        let header = try SealedBlob.header(of: blob)
        let flags = header.scheme == GatedBlob.scheme ? try GatedBlob.header(of: blob).accessControl : 0
        let sealed = flags == 0 ? nil : AccessControl(rawValue: flags)
        guard (flags == 0) == ((item.attributes.accessControl?.rawValue ?? 0) == 0) else {
            throw KeychainError.decode("""
                the item \(identity.displayName) was tampered with: its access attribute \
                (\(ItemAccess.text(item.attributes.accessControl))) does not match its sealed blob (\(ItemAccess.text(sealed))); \
                delete it and add it again
                """)
        }
        return sealed
    }

    /// The gate slots a read asks the gatekeeper for: every combined one for `and`, the first
    /// presence one (else the first) for `or`, and every device slot.
    static func slotsToOpen(_ header: GatedBlob.Header) -> [Int] {
        let combined = header.gateSlots.indices.filter { header.gateSlots[$0].kind != .device }
        let devices = header.gateSlots.indices.filter { header.gateSlots[$0].kind == .device }
        if header.combination == .all { return combined + devices }
        let first = combined.first { header.gateSlots[$0].kind == .presence } ?? combined.first
        return (first.map { [$0] } ?? []) + devices
    }

    /// Whether opening asks the gatekeeper for a person (a presence or current-set slot), not
    /// only for this host's device key.
    var needsPresence: Bool {
        guard case .gated(let header, let slots) = seal else { return false }
        return slots.contains { header.gateSlots[$0].kind != .device }
    }

    /// Whether the gate asks for a finger and no password: a locked keychain is then opened by
    /// itself first (the password), then the item (the finger).
    var asksForFingerOnly: Bool {
        guard case .gated(let header, _) = seal else { return false }
        return AccessControl(rawValue: header.accessControl).asksForFingerOnly
            && !header.gateSlots.contains { $0.kind == .currentSet }
    }

    /// A this-device-only item Keygate 1.x sealed: its class pair was bound to the device key,
    /// and it has no device slot of the gatekeeper's.
    var isLegacyDeviceOnly: Bool {
        guard case .gated(let header, _) = seal else { return false }
        return header.accessibility.isThisDeviceOnly && !header.gateSlots.contains { $0.kind == .device }
    }

    /// Opens the blob with what KeyUnlocker.satisfy found for this need.
    func open(with keys: ReadKeys) throws -> SecureBytes {
        switch keys {
        case .classKey(let classKey):
            return try SealedBlob.open(blob, identity: identity, classKey: classKey)
        case .gated(let classPair, let shares, let classShare):
            return try GatedBlob.open(blob, identity: identity, keys: [classPair], shares: shares, classShare: classShare)
        case .legacy(let pairs):
            return try GatedBlob.open(blob, identity: identity, keys: pairs)
        }
    }
}

/// What satisfies a ReadNeed: the keys that open its boxes (KeyUnlocker.satisfy).
enum ReadKeys {
    /// Scheme 1's class key.
    case classKey(SecureBytes)
    /// Scheme 2: the class pair, the gate boxes' shares the gatekeeper opened (by slot index),
    /// and the class box's share when it was opened while the gatekeeper decided.
    case gated(classPair: BoxKeyPair, shares: [SecureBytes?], classShare: SecureBytes?)
    /// A Keygate 1.x item: the 1.x gate pairs the password opened, and its class pair.
    case legacy([BoxKeyPair])
}

/// What a read opens: the need KeyUnlocker satisfied and the keys that open it.
struct SatisfiedRead {
    let need: ReadNeed
    let keys: ReadKeys

    func open() throws -> SecureBytes { try need.open(with: keys) }
}
