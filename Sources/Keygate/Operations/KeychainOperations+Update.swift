// Updating items in place, as Apple's SecItemUpdate: attributes only (label, comment,
// description, generic, access group, synchronizable, which moves the item to its twin's
// primary key) keep the sealed blob as it is and
// never prompt; a new secret, or a change to a primary-key field, the accessibility or
// the access control, seals the secret again (its identity is the blob's associated
// data), which needs the item's key and may prompt as a read does.
//
// A gated item's label is sealed again on each write (ItemLabels).
//
// Delegates: storage to ItemStore, sealing to KeychainOperations.add, opening to
// KeychainOperations.secret.

extension KeychainOperations {
    /// Applies `changes` (and, when given, a new secret) to every item that matches
    /// `query`; returns how many were updated. Throws `.itemNotFound` when none match,
    /// and `.duplicateItem`, before anything is written, when a changed primary key
    /// would collide with another item.
    @discardableResult
    public func update(matching query: ItemQuery, set changes: ItemChanges, secret newSecret: SecureBytes? = nil) throws -> Int {
        try ItemFieldLimits.check(query)
        try ItemFieldLimits.check(changes)
        try changes.accessControl?.validate()
        // Labels opened (a gated item's is sealed), so a query by label and a kept label both work.
        let found = try storedItemsOpeningLabels(matching: query, loadBlobs: true)
        guard !found.isEmpty else {
            throw KeychainError.itemNotFound("no item matches the query to update: add it first, or check the service and account")
        }
        let plans = found.map { (old: $0, new: changes.applied(to: $0.attributes)) }
        // Duplicates are judged, as on Apple, by primary keys, and all before any write.
        var seen = Set<ItemIdentity>()
        for plan in plans where !seen.insert(plan.new.identity).inserted {
            throw KeychainError.duplicateItem("""
                the update would give several items the primary key \(plan.new.identity.displayName): narrow the query to one item
                """)
        }
        let oldIdentities = Set(found.map(\.attributes.identity))
        for plan in plans where plan.new.identity != plan.old.attributes.identity && !oldIdentities.contains(plan.new.identity) {
            if !(try store.search(ItemQuery(exactly: plan.new.identity), loadBlobs: false)).isEmpty {
                throw KeychainError.duplicateItem("""
                    an item for \(plan.new.identity.displayName) already exists: delete it first, or choose another account
                    """)
            }
        }
        for plan in plans {
            let old = plan.old.attributes
            var new = plan.new
            new.created = old.created
            let moved = new.identity != old.identity
            // The blob is bound to the item's name, not to its synchronizable flag: a flip of the
            // flag alone moves the item to its twin's key with the blob as it is (no prompt).
            let reseal = new.identity.canonicalBytes != old.identity.canonicalBytes || newSecret != nil
                || new.accessibility != old.accessibility || new.accessControl != old.accessControl
            if !reseal, let blob = plan.old.blob {
                let stored = try ItemLabels(keys: keys).sealed(new)
                try store.create(stored.value, blob: blob, replace: !moved)
                try settle(stored.owed, by: keys)
                if moved { try store.delete(ItemQuery(exactly: old.identity)) }
                continue
            }
            let secret: SecureBytes
            if let newSecret {
                secret = newSecret
            } else {
                guard let opened = try self.secret(for: old.identity) else {
                    throw KeychainError.itemNotFound("the item \(old.identity.displayName) disappeared during the update: try again")
                }
                secret = opened
            }
            if new.label == nil, new.sealedLabel != nil {
                // The sealed label is bound to the old name: opened now (the read above may have
                // unlocked), so that `add` seals it for the new one; never carried over unopened.
                new.label = labels.opened(old).label
                if new.label == nil, new.identity.canonicalBytes != old.identity.canonicalBytes {
                    throw KeychainError.interactionNotAllowed("""
                        the label of \(old.identity.displayName) is sealed and the keychain is locked: unlock it (keygate unlock), \
                        then update the item again
                        """)
                }
            }
            try add(new, secret: secret, replace: !moved)
            if moved { try store.delete(ItemQuery(exactly: old.identity)) }
        }
        return plans.count
    }
}
