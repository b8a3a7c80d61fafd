// The keychain as keygate-secret-service sees it: Keygate's own items and the items clients
// made, in the user's embedded store (the file the CLI's `KEYGATE_STORE=embedded` uses), plus
// the in-memory `session` collection. Every item comes out with its lock state as a type
// (ItemLockState): unlocked while the master key is in the kernel keyring and the item needs
// no person; a gated item is always locked.
//
// Sealing: a client's item is sealed with the keychain's when-unlocked class key, bound to 16
// random bytes of its own (its identity for the seal), so its blob opens in no other row. Keygate's
// own items are opened as the CLI opens them (KeychainOperations.secret, the policy and the
// gatekeeper included), by an operations value that can never prompt.
//
// Delegates: the store to KeygateStorage's EmbeddedStore (SecretServiceTables), keys and the
// unlock to Keygate's KeychainOperations.
import Keygate
import KeygateCore

package final class ClientKeychain {
    /// Opens items: can never prompt (a gated item is the ItemAuthorizer's).
    let reader: KeychainOperations
    /// Unlocks the keychain through the gatekeeper, asking with the daemon's prompter.
    let unlocker: KeychainOperations
    let store: EmbeddedStore
    var session = SessionCollection()
    /// The schema of Keygate's own items, as SecretServiceStore writes it to other providers.
    static let keygateSchema = "io.keygate.Item"

    init(environment: KeygateEnvironment, prompter: (any Prompter)?) throws {
        let reading = try KeychainOperations.secretService(prompter: NeverPrompter("the Secret Service never prompts for a read"),
                                                           environment: environment)
        reader = reading.operations
        store = reading.store
        unlocker = try KeychainOperations.secretService(
            prompter: prompter ?? NeverPrompter("no display for a pinentry and no KEYGATE_ASKPASS: the daemon cannot ask"),
            environment: environment).operations
        try store.prepareSecretServiceTables()
        refresh(force: true)
    }

    /// The keychain's lock state as of the last look at the kernel keyring (`refresh`): not one
    /// look per item listed, nor per call. "Unlocked" may be stale by at most `lockStateAge`, and
    /// only as shown: opening a secret needs the cached key at that moment, so nothing opens
    /// after a lock. "Locked" is never stale: a client told so refuses to write or asks the
    /// person to unlock what is open (`keygate init` or `keygate unlock` then a client at once).
    private(set) var isLocked = true
    private var lookedAt: ContinuousClock.Instant?
    static let lockStateAge: Duration = .milliseconds(100)

    /// Looks at the kernel keyring again when the keychain was locked at the last look, when that
    /// look is older than `lockStateAge`, or at once with `force` (after a lock or an unlock of
    /// the daemon's own).
    func refresh(force: Bool = false) {
        let now = ContinuousClock.now
        if !force, !isLocked, let lookedAt, now - lookedAt < Self.lockStateAge { return }
        isLocked = !reader.isUnlocked
        lookedAt = now
    }
    var isInitialized: Bool { reader.isInitialized }
    var dataDirectory: String { reader.dataDirectory }

    // MARK: Collections

    /// Collections clients made, by name.
    func createdCollections() throws -> [ForeignCollectionRow] { try store.foreignCollections() }

    func collectionExists(_ name: String) throws -> Bool {
        if name == CollectionName.login || name == CollectionName.session { return true }
        return try createdCollections().contains { $0.name == name }
    }

    func isLocked(collection: String) -> Bool { collection == CollectionName.session ? false : isLocked }

    // MARK: Reading

    /// Items of `collection` (nil: all) whose attributes hold every pair of `attributes`.
    func items(in collection: String?, matching attributes: [String: String]) throws -> [ItemInfo] {
        var out: [ItemInfo] = []
        if collection != CollectionName.session {
            let keygateQuery = Self.keygateQuery(collection, attributes)
            let found = try store.secretServiceSearch(keygateAttributes: keygateQuery, collection: collection, attributes: attributes)
            out += found.keygate.map(info)
            out += found.clients.map(info)
        }
        if collection == nil || collection == CollectionName.session {
            for id in session.matching(attributes) { if let item = sessionInfo(id) { out.append(item) } }
        }
        return out
    }

    /// The search of Keygate's own items a search of `collection` makes, or nil when it can find
    /// none: they are in `login`, and an xdg:schema other than theirs matches none of them.
    private static func keygateQuery(_ collection: String?, _ attributes: [String: String]) -> [String: String]? {
        guard collection == nil || collection == CollectionName.login else { return nil }
        var query = attributes
        guard let schema = query.removeValue(forKey: "xdg:schema") else { return query }
        return schema == keygateSchema ? query : nil
    }

    /// As `items(in:matching:)`, without labels and attributes: each item's place and lock state.
    func entries(in collection: String?, matching attributes: [String: String]) throws -> [ItemEntry] {
        var out: [ItemEntry] = []
        if collection != CollectionName.session {
            let keygateQuery = Self.keygateQuery(collection, attributes)
            let found = try store.secretServiceSearch(keygateAttributes: keygateQuery, collection: collection, attributes: attributes,
                                                      clientAttributes: false)
            for row in found.keygate { out.append(entry(row)) }
            for row in found.clients { out.append(entry(row)) }
        }
        if collection == nil || collection == CollectionName.session {
            for id in session.matching(attributes) { if let item = sessionInfo(id) { out.append(entry(item)) } }
        }
        return out
    }

    /// As `item(_:in:)`, without its label and attributes.
    func entry(_ ref: ItemRef, in collection: String?) throws -> ItemEntry? {
        let found: ItemEntry?
        switch ref {
        case .keygate(let id): found = try store.keygateItem(id: id, loadBlob: false).map(entry)
        case .client(let id): found = try store.foreignItem(id: id, loadBlob: true, loadAttributes: false).map(entry)
        case .memory(let id): found = sessionInfo(id).map(entry)
        }
        guard let found, collection == nil || found.collection == collection else { return nil }
        return found
    }

    /// The item `ref`, when it is in `collection` (nil: wherever it is).
    func item(_ ref: ItemRef, in collection: String?) throws -> ItemInfo? {
        let found: ItemInfo?
        switch ref {
        case .keygate(let id): found = try store.keygateItem(id: id, loadBlob: false).map(info)
        case .client(let id): found = try store.foreignItem(id: id, loadBlob: true).map(info)
        case .memory(let id): found = sessionInfo(id)
        }
        guard let found, collection == nil || found.collection == collection else { return nil }
        return found
    }

    /// What opening the gated item `ref` takes (its blob, fetched now); nil when it is gone or
    /// needs no person.
    func gatedOpening(_ ref: ItemRef) throws -> GatedOpening? {
        switch ref {
        case .keygate(let id):
            guard let row = try store.keygateItem(id: id, loadBlob: true), let blob = row.item.blob,
                  KeychainOperations.needsPerson(blob) else { return nil }
            return .keygate(row.item)
        case .client(let id):
            guard let row = try store.foreignItem(id: id, loadBlob: true), let blob = row.blob,
                  KeychainOperations.needsPerson(blob) else { return nil }
            return .client(blob: blob, uid: row.uid)
        case .memory:
            return nil
        }
    }

    private func info(_ row: KeygateItemRow) -> ItemInfo {
        let attributes = row.item.attributes
        var shown = ItemAttributeCodec.encode(attributes)
        shown["xdg:schema"] = Self.keygateSchema
        // A gated item's label is sealed in the file: shown while the keychain is unlocked, as a client's.
        let label = isLocked && attributes.sealedLabel != nil ? Self.lockedLabel : reader.shownLabel(of: attributes) ?? Self.lockedLabel
        return ItemInfo(ref: .keygate(row.id), collection: CollectionName.login, label: label,
                        attributes: shown, created: attributes.created, modified: attributes.modified, contentType: "text/plain",
                        access: access(of: row))
    }

    private func entry(_ row: KeygateItemRow) -> ItemEntry {
        ItemEntry(ref: .keygate(row.id), collection: CollectionName.login, contentType: "text/plain", access: access(of: row))
    }

    private func access(of row: KeygateItemRow) -> ItemAccess {
        let attributes = row.item.attributes
        // The attribute lists the item; its blob decides when it is opened (gated blobs never
        // open with the cached keys, whatever the attribute says).
        if attributes.accessControl != nil { return .locked(LockedItem(ref: .keygate(row.id), reason: .gated)) }
        if isLocked { return .locked(LockedItem(ref: .keygate(row.id), reason: .keychainLocked)) }
        let reader = self.reader
        let identity = attributes.identity
        return .unlocked(UnlockedItem(ref: .keygate(row.id)) {
            guard let secret = try reader.secretWithoutPerson(for: identity) else {
                throw SecretServiceError.noSuchObject("the item \(identity.displayName)")
            }
            return secret
        })
    }

    private func info(_ row: ForeignItemRow) -> ItemInfo {
        ItemInfo(ref: .client(row.id), collection: row.collection, label: label(of: row), attributes: row.attributes, created: row.created,
                 modified: row.modified, contentType: row.contentType, access: access(of: row))
    }

    private func entry(_ row: ForeignItemRow) -> ItemEntry {
        ItemEntry(ref: .client(row.id), collection: row.collection, contentType: row.contentType, access: access(of: row))
    }

    private func access(of row: ForeignItemRow) -> ItemAccess {
        let ref = ItemRef.client(row.id)
        let blob = row.blob ?? []
        if KeychainOperations.needsPerson(blob) { return .locked(LockedItem(ref: ref, reason: .gated)) }
        if isLocked { return .locked(LockedItem(ref: ref, reason: .keychainLocked)) }
        let reader = self.reader
        let identity = Self.sealIdentity(row.uid)
        return .unlocked(UnlockedItem(ref: ref) { try reader.openForClient(blob, identity: identity) })
    }

    private func entry(_ info: ItemInfo) -> ItemEntry {
        ItemEntry(ref: info.ref, collection: info.collection, contentType: info.contentType, access: info.access)
    }

    /// What a gated item's label reads as while the keychain is locked (its text is sealed), a
    /// client's or Keygate's own.
    static let lockedLabel = "(locked)"

    /// A client item's label: a gated item's is sealed (no plaintext in the file), opened with the
    /// cached class key; never a prompt.
    private func label(of row: ForeignItemRow) -> String {
        guard let sealed = row.sealedLabel else { return row.label }
        guard !isLocked else { return Self.lockedLabel }
        do { return try reader.openClientLabel(sealed, uid: row.uid) } catch { return Self.lockedLabel }
    }

    private func sessionInfo(_ id: Int64) -> ItemInfo? {
        guard let item = session.items[id] else { return nil }
        let secret = item.secret
        return ItemInfo(ref: .memory(id), collection: CollectionName.session, label: item.label, attributes: item.attributes,
                        created: item.created, modified: item.modified, contentType: item.contentType,
                        access: .unlocked(UnlockedItem(ref: .memory(id)) { secret }))
    }

    /// The identity a client item's blob is sealed to: its 16 random bytes, never reused.
    static func sealIdentity(_ uid: [UInt8]) -> ItemIdentity { KeychainOperations.clientSealIdentity(uid) }

    // MARK: Writing

    /// Stores a client's item in `collection`; with `replace`, over the item of that collection
    /// whose attributes are exactly these. Returns the item and whether it is new.
    func createItem(in collection: String, label: String, attributes: [String: String], secret: SecureBytes,
                    contentType: String, replace: Bool) throws -> (ItemInfo, created: Bool) {
        if collection == CollectionName.session {
            let (id, created) = session.store(label: label, attributes: attributes, secret: secret, contentType: contentType,
                                              replace: replace)
            guard let made = sessionInfo(id) else { throw SecretServiceError.noSuchObject("the new item") }
            return (made, created)
        }
        guard !isLocked else { throw SecretServiceError.isLocked("the collection \(collection)") }
        var existing: ForeignItemRow?
        if replace {
            existing = try store.foreignItems(collection: collection, matching: attributes, loadBlobs: true)
                .first { $0.attributes == attributes }
            if let found = existing, KeychainOperations.needsPerson(found.blob ?? []) {
                throw SecretServiceError.isLocked("the item \(found.label) (it needs a person for each read)")
            }
        }
        // A fresh binding for each blob: a replaced secret is sealed again under new bytes.
        let uid = Sodium.randomBytes(16)
        // The policy's access for Secret Service clients (none by default): a gated item is sealed
        // as the CLI seals one, its label too.
        let blob: [UInt8]
        var sealedLabel: [UInt8]?
        if let access = try reader.secretServiceAccess(attributes) {
            blob = try reader.sealGatedForClient(secret, uid: uid, access: access)
            sealedLabel = try reader.sealClientLabel(label, uid: uid)
        } else {
            blob = try reader.sealForClient(secret, identity: Self.sealIdentity(uid))
        }
        let row = ForeignItemRow(collection: collection, uid: uid, label: sealedLabel == nil ? label : "", sealedLabel: sealedLabel,
                                 contentType: contentType, attributes: attributes, blob: blob)
        let stored = try store.writeForeignItem(row, replacing: existing?.id)
        guard let made = try item(.client(stored.id), in: collection) else { throw SecretServiceError.noSuchObject("the new item") }
        return (made, existing == nil)
    }

    func setSecret(_ info: ItemInfo, _ secret: SecureBytes, contentType: String) throws {
        switch info.ref {
        case .memory(let id):
            _ = session.update(id) {
                $0.secret = secret
                $0.contentType = contentType
            }
        case .client(let id):
            guard !isLocked else { throw SecretServiceError.isLocked("the item \(info.label)") }
            guard let row = try store.foreignItem(id: id, loadBlob: true) else { throw SecretServiceError.noSuchObject(info.label) }
            guard !KeychainOperations.needsPerson(row.blob ?? []) else { throw SecretServiceError.isLocked("the item \(info.label)") }
            var updated = row
            updated.uid = Sodium.randomBytes(16)
            updated.blob = try reader.sealForClient(secret, identity: Self.sealIdentity(updated.uid))
            updated.contentType = contentType
            _ = try store.writeForeignItem(updated, replacing: id)
        case .keygate(let id):
            guard case .unlocked = info.access else { throw SecretServiceError.isLocked("the item \(info.label)") }
            guard let row = try store.keygateItem(id: id, loadBlob: false) else { throw SecretServiceError.noSuchObject(info.label) }
            try reader.add(row.item.attributes, secret: secret, replace: true)
        }
    }

    func setLabel(_ info: ItemInfo, _ label: String) throws {
        switch info.ref {
        case .memory(let id): _ = session.update(id) { $0.label = label }
        case .client(let id):
            guard let row = try store.foreignItem(id: id, loadBlob: true) else { throw SecretServiceError.noSuchObject(info.label) }
            guard row.sealedLabel != nil else {
                try store.updateForeignItem(id: id, label: label, attributes: nil)
                return
            }
            // A gated item's label stays sealed (with the class key: the keychain must be open).
            guard !isLocked else { throw SecretServiceError.isLocked("the item's label") }
            var updated = row
            updated.sealedLabel = try reader.sealClientLabel(label, uid: row.uid)
            _ = try store.writeForeignItem(updated, replacing: id)
        case .keygate:
            throw SecretServiceError(SecretServiceErrorName.notSupported,
                                     "the item \(info.label) is Keygate's own: change its label with keygate (keygate add -U --label)")
        }
    }

    func setAttributes(_ info: ItemInfo, _ attributes: [String: String]) throws {
        switch info.ref {
        case .memory(let id): _ = session.update(id) { $0.attributes = attributes }
        case .client(let id): try store.updateForeignItem(id: id, label: nil, attributes: attributes)
        case .keygate:
            throw SecretServiceError(SecretServiceErrorName.notSupported,
                                     "the item \(info.label) is Keygate's own: its attributes are its identity, changed with keygate")
        }
    }

    func delete(_ info: ItemInfo) throws {
        switch info.ref {
        case .memory(let id): _ = session.remove(id)
        case .client(let id): try store.deleteForeignItem(id: id)
        case .keygate(let id):
            guard let row = try store.keygateItem(id: id, loadBlob: false) else { return }
            try reader.delete(matching: ItemQuery(exactly: row.item.attributes.identity))
        }
    }

    // MARK: Locking

    /// Asks for the login password (through the gatekeeper's PAM conversation) and caches the keys.
    func unlock() throws { try unlocker.unlock() }

    /// Drops the cached keys, as `keygate lock` does.
    func lock() {
        _ = reader.lock(all: false)
        refresh(force: true)
    }
}
