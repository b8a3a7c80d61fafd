// A gated item's label in the operations: sealed on every write of the item (KeyUnlocker+Labels),
// opened on every read that returns attributes, from the keys cached now (never a prompt: a
// listing never asks). While the keychain is locked a sealed label reads as nil, and a search by
// label never matches such an item: the answer must not depend on a label it cannot read.
// An item written before labels were sealed keeps its plaintext label until its next write
// (`keygate add -U`, an update), which seals it.
//
// Delegates: sealing and opening to KeyUnlocker (sealLabel, openLabel); KeychainOperations asks
// the store (storedItemsOpeningLabels).

/// The labels of the items one unlocker's keys reach.
struct ItemLabels {
    let keys: KeyUnlocker

    /// `attributes` as a write stores them: a gated item's label sealed (`sealedLabel`, and `label`
    /// nil, so that no store writes it in the clear), an ungated item's label in the clear. A label
    /// left nil by the caller while a sealed one is there is the sealed one, opened to be sealed again
    /// for this identity; when it cannot be opened now (the keychain locked) it is kept as it is
    /// where it still opens for this item, else the write is refused before anything is written.
    func sealed(_ attributes: ItemAttributes) throws -> Unlocked<ItemAttributes> {
        var out = attributes
        if out.label == nil, let sealed = out.sealedLabel {
            if let opened = keys.openLabel(sealed, of: out) {
                out.label = opened
            } else if out.accessControl != nil {
                return Unlocked(out)   // still gated, same name (sealed bytes are bound to it): kept as they are
            } else {
                throw KeychainError.interactionNotAllowed("""
                    the label of \(out.identity.displayName) is sealed and the keychain is locked: unlock it (keygate unlock), \
                    then try again
                    """)
            }
        }
        out.sealedLabel = nil
        guard out.accessControl != nil, let label = out.label else { return Unlocked(out) }
        return try keys.sealLabel(label, of: out).map { sealed in
            out.sealedLabel = sealed
            out.label = nil
            return out
        }
    }

    /// `attributes` with its sealed label opened (nil while the keychain is locked). Never prompts.
    func opened(_ attributes: ItemAttributes) -> ItemAttributes {
        guard let sealed = attributes.sealedLabel else { return attributes }
        var out = attributes
        out.label = keys.openLabel(sealed, of: attributes)
        return out
    }

    /// `query` with its label left open: what the store is asked, `opening` then matching it.
    static func withoutLabel(_ query: ItemQuery) -> ItemQuery {
        var asked = query
        asked[.label] = nil
        return asked
    }

    /// `items` (found by `withoutLabel(query)`) with their sealed labels opened, those that match
    /// `query`: an item whose label stays sealed never matches a label.
    func opening(_ items: [StoredItem], matching query: ItemQuery) -> [StoredItem] {
        items.map { found in
            var item = found
            item.attributes = opened(found.attributes)
            return item
        }.filter { item in
            guard query.matches(item.attributes) else { return false }
            return query[.label] == nil || item.attributes.sealedLabel == nil || item.attributes.label != nil
        }
    }
}

extension KeychainOperations {
    /// The labels this keychain's keys reach.
    var labels: ItemLabels { ItemLabels(keys: keys) }

    /// The items matching `query`, their sealed labels opened: a query that names a label asks
    /// the store without it (the store cannot read a sealed label) and matches the label here
    /// (ItemLabels.opening). Never prompts.
    func storedItemsOpeningLabels(matching query: ItemQuery, loadBlobs: Bool) throws -> [StoredItem] {
        labels.opening(try store.search(ItemLabels.withoutLabel(query), loadBlobs: loadBlobs), matching: query)
    }
}
