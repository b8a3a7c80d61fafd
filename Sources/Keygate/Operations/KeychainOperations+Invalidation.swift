// Which items can no longer be read, and why: a gated item whose gate keys the gatekeeper
// no longer derives (current-set after any password change, an item sealed on another
// host). `keygate list` shows it and `passwd --recovery` counts what it would invalidate.
// Reads headers and asks the gatekeeper (GateAccess.invalidSlots), never a secret.

extension KeychainOperations {
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
        }.sorted { Self.listOrder($0.attributes, $1.attributes) }
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
