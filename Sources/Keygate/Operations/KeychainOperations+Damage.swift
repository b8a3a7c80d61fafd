// A damaged item: one whose secret came back empty from the store. A Secret Service stopped
// inside CreateItem (gnome-keyring saves the attributes, then the secret), or killed soon after
// an acknowledged write (kwalletd5 keeps the secret in memory until it saves: measured in
// docs/DECISIONS.md), leaves Keygate's attributes with no secret. `get` and `exists` exit 44
// and `list` marks it, all with the same words: what happened and what to do. The next `add`
// (with or without -U) takes its place. Known only once the blob is read, never with a window.

extension KeychainOperations {
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
}
