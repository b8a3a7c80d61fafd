// The storage layer's contract: what the keychain asks of a backend (search, create,
// delete, status), independent of how items are kept. Two backends: `SecretServiceStore` (sd-bus)
// and `EmbeddedStore` (SQLite); `StoreSelection` picks one.
import KeygateCore

/// One item as the storage layer sees it: attributes in the clear, the secret as a sealed blob (ciphertext).
package struct StoredItem: Sendable {
    package var attributes: ItemAttributes
    /// The sealed blob; nil unless the search asked to load blobs.
    package var blob: [UInt8]?

    /// An item with an empty secret: every blob Keygate writes has a header, so this is what a
    /// Secret Service leaves when it dies inside CreateItem after storing the attributes and
    /// before the secret (gnome-keyring saves its file at each step). Reads treat it as absent
    /// and the next add takes its place. Only known once the blob was loaded.
    package var isUnfinishedWrite: Bool { blob?.isEmpty ?? false }
}

/// What `keygate status` reports about the store.
package struct StoreStatus: Sendable {
    /// The backend, e.g. "Secret Service (D-Bus, plain session over sealed blobs)" or "embedded (SQLite)".
    package var backend: String
    /// The default collection's label (or its D-Bus path when it has none); the embedded store's file.
    package var collection: String
    package var locked: Bool
}

/// How much of each found item a search reads. A Secret Service answers each item property
/// with a lookup of its own (gnome-keyring 42: ~0.25 ms a property, and `GetAll` costs the sum
/// of five), so a read that only opens a secret asks for the attribute dictionary alone.
package enum ItemDetail: Sendable {
    /// The attribute dictionary: identity, accessibility, access control, comment, generic data,
    /// generation, and the label and dates where Keygate's attributes hold them (else "" and 0).
    /// What opening a secret or checking that an item exists needs. A query that matches a
    /// label reads `.full`.
    case attributes
    /// Everything ItemAttributes holds: the label and both dates always (from the Secret
    /// Service's own properties for an item whose attributes lack them).
    case full
}

package protocol ItemStore: Sendable {
    /// Items matching the query, in the default collection. loadBlobs: also fetch each secret;
    /// detail: how much of each item to read.
    func search(_ query: ItemQuery, loadBlobs: Bool, detail: ItemDetail) throws -> [StoredItem]
    /// Creates the item. If an item with the same identity (Apple primary key) exists: throws
    /// .duplicateItem when !replace; when replace, updates it IN PLACE (secret, attributes, label), keeping its
    /// creation date.
    func create(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws
    /// Deletes every matching item; returns how many.
    @discardableResult func delete(_ query: ItemQuery) throws -> Int
    func status() throws -> StoreStatus
    /// Items matching the query with their secrets where they can be read without a provider's
    /// window (list: never a window). An item the provider locks one by one while its collection
    /// is open (KeePassXC's ConfirmAccessItem) comes with a nil blob; a locked collection still
    /// throws as `search` does.
    func searchWithoutWindows(_ query: ItemQuery) throws -> [StoredItem]
}

extension ItemStore {
    package func searchWithoutWindows(_ query: ItemQuery) throws -> [StoredItem] {
        try search(query, loadBlobs: true, detail: .full)
    }

    /// Items matching the query, every attribute read.
    package func search(_ query: ItemQuery, loadBlobs: Bool) throws -> [StoredItem] {
        try search(query, loadBlobs: loadBlobs, detail: .full)
    }
}
