// Which items can no longer be read, and why, from their sealed headers alone: a gated
// item whose gate keys were replaced (current-set after a password change, user presence
// after a recovery reset). `keygate list` shows it, `get`'s 44 says it, and `passwd
// --recovery` counts what it would invalidate. Reads headers and keys.json, never a secret.

extension KeychainOperations {
    /// Every matching item with, for one that can no longer be read, the reason (`keygate list`).
    /// Reads the sealed blobs' headers and keys.json, never a secret; never prompts.
    public func listing(matching query: ItemQuery) throws -> [ListedItem] {
        try ItemFieldLimits.check(query)
        let current = try? PublicKeys.load(directory: keys.context.dataDirectory)
        return try store.search(query, loadBlobs: true)
            .filter { query.matches($0.attributes) && !$0.isUnfinishedWrite }
            .map { item in
                let header = item.blob.flatMap { try? GatedBlob.header(of: $0) }
                return ListedItem(attributes: item.attributes,
                                  invalidated: current == nil ? nil : header.flatMap { Self.invalidation($0, current: current) })
            }
            .sorted { Self.listOrder($0.attributes, $1.attributes) }
    }

    /// What `keygate passwd --recovery` would invalidate: the current-set items (their keys die
    /// with the password change); user-presence items are the gatekeeper's and keep opening.
    /// Never prompts.
    public func itemsARecoveryResetInvalidates() throws -> (userPresence: Int, currentSet: Int) {
        let current = try? PublicKeys.load(directory: keys.context.dataDirectory)
        var counts = (userPresence: 0, currentSet: 0)
        for item in try store.search(ItemQuery(), loadBlobs: true) where !item.isUnfinishedWrite {
            guard let blob = item.blob, let header = try? GatedBlob.header(of: blob), !header.gateSlots.isEmpty,
                  Self.invalidation(header, current: current) == nil else { continue }
            if header.gateSlots.contains(where: { $0.kind == .currentSet }) { counts.currentSet += 1 }
        }
        return counts
    }

    /// Why a gated item can no longer be opened, from its header alone: never known here any
    /// more. The gate keys are the gatekeeper's (docs/GATEKEEPER.md), derived from root's secret
    /// and, for current-set, the password's entry in the shadow database: only the gatekeeper
    /// can tell, and a read says it (exit 44, "was invalidated").
    static func invalidation(_ header: GatedBlob.Header, current: PublicKeys?) -> String? {
        nil
    }
}

/// An item as `keygate list` shows it.
public struct ListedItem: Sendable {
    public let attributes: ItemAttributes
    /// Why the item can no longer be read (its secret is gone for good), or nil.
    public let invalidated: String?

    public init(attributes: ItemAttributes, invalidated: String?) {
        self.attributes = attributes
        self.invalidated = invalidated
    }
}
