// What items are there and whether each still opens, never a secret and never a prompt:
// `keygate list`, `exists`, doctor's damaged items and what `passwd --recovery` would
// invalidate. An item can fail to open two ways. Invalidated: a gated item whose gate keys the
// gatekeeper no longer derives (current-set after any password change, an item sealed on
// another host); told from the blob's header and the gatekeeper's answer
// (GateAccess.invalidSlots). Damaged: its secret came back empty from the store. A Secret
// Service stopped inside CreateItem (gnome-keyring saves the attributes, then the secret), or
// killed soon after an acknowledged write (kwalletd5 keeps the secret in memory until it saves:
// measured in docs/DECISIONS.md), leaves Keygate's attributes with no secret. `get` and
// `exists` exit 44 and `list` marks it, all with the same words: what happened and what to do.
// The next `add` (with or without -U) takes its place. Known only once the blob is read, never
// with a window.
//
// Delegates: the search to the ItemStore, labels to ItemLabels, the gatekeeper's answer to
// KeyUnlocker's facts, the policy floor to KeychainContext.

/// The items one keychain's store holds, with what can be told of each without opening it.
public struct ItemInventory: Sendable {
    let store: any ItemStore
    let keys: KeyUnlocker
    let context: KeychainContext

    var labels: ItemLabels { ItemLabels(keys: keys) }

    /// Whether the item with exactly this identity is there, and whole (`exists`).
    public enum Existence: Sendable, Equatable {
        case absent
        case present
        /// Its secret came back empty: why, and what to do.
        case damaged(String)
    }

    /// Whether the item is there, and whole: one search, its secret read where no provider
    /// window is needed (never a window; an item KeePassXC locks for this program counts as present).
    public func existence(of identity: ItemIdentity) throws -> Existence {
        try ItemFieldLimits.check(identity: identity)
        guard let item = try store.searchWithoutWindows(ItemQuery(exactly: identity)).first(where: {
            ItemQuery(exactly: identity).matches($0.attributes)
        }) else { return .absent }
        return item.isUnfinishedWrite ? .damaged(Self.damaged(identity)) : .present
    }

    /// Why the item with exactly this identity is damaged, or nil when it is not (or cannot be
    /// told without a provider's window: KeePassXC's per-item locks).
    public func damage(of identity: ItemIdentity) throws -> String? {
        try ItemFieldLimits.check(identity: identity)
        guard let item = try store.searchWithoutWindows(ItemQuery(exactly: identity)).first, item.isUnfinishedWrite else {
            return nil
        }
        return Self.damaged(identity)
    }

    /// Every damaged item's identity (doctor), read as `list` reads: never a window.
    public func damagedItems() throws -> [ItemIdentity] {
        try store.searchWithoutWindows(ItemQuery()).filter(\.isUnfinishedWrite).map(\.attributes.identity)
    }

    /// The words every command uses for a damaged item.
    static func damaged(_ identity: ItemIdentity) -> String {
        "the item \(identity.displayName) is damaged: its secret came back empty from the store (a Secret Service stopped "
            + "during or soon after writing it); add it again (keygate add -U), which replaces it, or delete it (keygate delete)"
    }

    /// Every matching item with, for one that can no longer be read, the reason (`keygate list`).
    /// Reads the sealed blobs' headers and asks the gatekeeper which gate keys it still holds for
    /// each gated item, several items' checks in flight at once (no prompt, no secret).
    public func listing(matching query: ItemQuery) throws -> [ListedItem] {
        try ItemFieldLimits.check(query)
        // Labels opened (a gated item's is sealed: ItemLabels), never a prompt.
        let items = labels.opening(try store.searchWithoutWindows(ItemLabels.withoutLabel(query)), matching: query)
        var gated: [(blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity)] = []
        var gatedAt: [Int] = []   // the index in `items` of each of `gated`
        for (index, item) in items.enumerated() {
            guard let blob = item.blob, let header = try? GatedBlob.header(of: blob), !header.gateSlots.isEmpty else { continue }
            gated.append((blob, header, item.attributes.identity))
            gatedAt.append(index)
        }
        // A damaged item is listed, marked with what `get` and `exists` say of it.
        var reasons = items.map { $0.isUnfinishedWrite ? Self.damaged($0.attributes.identity) : nil }
        for (n, dead) in keys.facts.invalidSlots(of: gated).enumerated() {
            if let dead { reasons[gatedAt[n]] = Self.invalidation(dead, header: gated[n].header) }
        }
        return items.indices.map { index in
            var listed = ListedItem(attributes: items[index].attributes, invalidated: reasons[index])
            (listed.accessAtRead, listed.raisedBy) = floor(over: items[index].attributes)
            return listed
        }.sorted { KeychainOperations.listOrder($0.attributes, $1.attributes) }
    }

    /// The access a read of this item needs when the policy's floor asks for more than it was
    /// sealed with, and the line of that floor; (nil, nil) otherwise, or when no decision can be
    /// made (a broken system file: the read then fails closed, and says so).
    private func floor(over attributes: ItemAttributes) -> (AccessControl?, PolicyOrigin?) {
        guard let decision = try? context.decision(for: attributes.identity), let floor = decision.minimumAccess,
              AccessControl.stricter(attributes.accessControl, floor) != attributes.accessControl else { return (nil, nil) }
        return (AccessControl.stricter(attributes.accessControl, floor), decision.origins[.minimumAccess])
    }

    /// What `keygate passwd --recovery` would invalidate: the readable current-set items (their
    /// keys die with the password change). User-presence items are the gatekeeper's and keep
    /// opening; the count is kept for items Keygate 1.x sealed that were never migrated.
    /// Never prompts.
    public func itemsARecoveryResetInvalidates() throws -> (userPresence: Int, currentSet: Int) {
        var counts = (userPresence: 0, currentSet: 0)
        let legacyIDs = keys.facts.legacyGateKeyIDs()
        for item in try store.search(ItemQuery(), loadBlobs: true) where !item.isUnfinishedWrite {
            guard let blob = item.blob, let header = try? GatedBlob.header(of: blob), !header.gateSlots.isEmpty,
                  invalidation(of: item) == nil else { continue }
            if header.gateSlots.contains(where: { $0.kind == .currentSet }) {
                counts.currentSet += 1
            } else if header.gateSlots.contains(where: { legacyIDs.contains($0.keyID) }) {
                counts.userPresence += 1
            }
        }
        return counts
    }

    /// Why a gated item can no longer be opened (the gatekeeper no longer derives the gate keys
    /// it needs: all for `and`, every one for `or`), or nil while it can be, or cannot be told.
    func invalidation(of item: StoredItem) -> String? {
        guard let blob = item.blob, let header = try? GatedBlob.header(of: blob), !header.gateSlots.isEmpty,
              let dead = try? keys.facts.invalidSlots(of: blob, header: header, identity: item.attributes.identity)
        else { return nil }
        return Self.invalidation(dead, header: header)
    }

    /// The reason for `dead` (the slots whose keys the gatekeeper no longer holds), or nil when
    /// the item still opens.
    static func invalidation(_ dead: [GateKind], header: GatedBlob.Header) -> String? {
        guard !dead.isEmpty else { return nil }
        let combined = header.gateSlots.filter { $0.kind != .device }
        let deadCombined = dead.filter { $0 != .device }
        let lost = dead.contains(.device) || (header.combination == .all ? !deadCombined.isEmpty
            : (!combined.isEmpty && deadCombined.count == combined.count))
        guard lost else { return nil }
        if dead.contains(.currentSet) {
            return "it was bound to your previous password (current-set), and the password has changed since"
        }
        if dead.contains(.device) {
            return "it is this-device-only and was sealed on another host, or before this host's key was rotated"
        }
        return """
            it needs a user-presence key this host's gatekeeper does not hold for it (sealed on another host, or by Keygate 1.x \
            and not moved since)
            """
    }
}

/// An item as `keygate list` shows it.
public struct ListedItem: Sendable {
    public let attributes: ItemAttributes
    /// Why the item can no longer be read (its secret is gone for good), or nil.
    public let invalidated: String?
    /// What a read needs when a policy floor (minimum-access) asks for more than the item's own
    /// access control, and the line of that floor; nil when the item's own decides.
    public var accessAtRead: AccessControl?
    public var raisedBy: PolicyOrigin?

    public init(attributes: ItemAttributes, invalidated: String?) {
        self.attributes = attributes
        self.invalidated = invalidated
    }
}

extension KeychainOperations {
    /// What is there, and whether each item still opens.
    public var inventory: ItemInventory { ItemInventory(store: store, keys: keys, context: context) }
}
