// What keygate-secret-service keeps in the embedded store beside Keygate's own items: the
// items Secret Service clients create (any attribute names, a label, a content type, a sealed
// blob), the collections they create, and the aliases they set. Their own tables, made by one
// migration step of their own (`prepareSecretServiceTables`, CREATE ... IF NOT EXISTS: a
// Keygate that does not know them still reads the file, and the schema version of
// Keygate's items does not move). Keygate's items (the `items` table) are read here as the
// Secret Service sees them: by row id, and matched by their stored attribute strings, as
// SecretServiceStore writes them to any other provider.
//
// Never plaintext of a secret: blobs are sealed by the caller (the daemon, with the keychain's
// class keys) before they reach this file. A gated item's label is sealed too (`sealedLabel`):
// its plain `label` column is then empty. Writes are one transaction with synchronous=FULL
// (EmbeddedStore's writes), so an answered CreateItem is on disk.
import KeygateCore
import Synchronization

/// An item a Secret Service client made.
package struct ForeignItemRow: Sendable {
    package var id: Int64
    package var collection: String
    /// 16 random bytes the item's blob is bound to (its associated data): a blob moved to another
    /// row does not open there.
    package var uid: [UInt8]
    package var label: String
    /// The label sealed like a secret, for an item whose label must not be stored in the clear
    /// (a gated item); nil for every other item.
    package var sealedLabel: [UInt8]?
    package var contentType: String
    package var created: UInt64
    package var modified: UInt64
    package var attributes: [String: String]
    /// Nil unless asked for.
    package var blob: [UInt8]?

    package init(id: Int64 = 0, collection: String, uid: [UInt8], label: String, sealedLabel: [UInt8]? = nil,
                 contentType: String, created: UInt64 = 0, modified: UInt64 = 0, attributes: [String: String],
                 blob: [UInt8]?) {
        self.id = id
        self.collection = collection
        self.uid = uid
        self.label = label
        self.sealedLabel = sealedLabel
        self.contentType = contentType
        self.created = created
        self.modified = modified
        self.attributes = attributes
        self.blob = blob
    }
}

/// One of Keygate's own items, with the row id the Secret Service names it by.
package struct KeygateItemRow: Sendable {
    package var id: Int64
    package var item: StoredItem
}

/// A collection a Secret Service client made.
package struct ForeignCollectionRow: Sendable, Equatable {
    package var name: String
    package var label: String
    package var created: UInt64
    package var modified: UInt64

    package init(name: String, label: String, created: UInt64, modified: UInt64) {
        self.name = name
        self.label = label
        self.created = created
        self.modified = modified
    }
}

extension EmbeddedStore {
    /// The migration step of the Secret Service's tables. Idempotent; creates the file when there
    /// is none (the daemon calls it once at start).
    package func prepareSecretServiceTables() throws {
        try withDatabase(action: "prepare the Secret Service's tables", create: true, writes: true) { db in
            try Self.ensureSecretServiceTables(db)
        }
    }

    /// Makes the tables in `db` unless they are there: also each time the kept connection opens
    /// a file made since (a `keygate init` after the daemon started, a restore, `keygate migrate`).
    static func ensureSecretServiceTables(_ db: SQLiteDatabase) throws {
        if try db.scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'secret_service_items'") == "1" {
            return
        }
        try db.writeTransaction {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS secret_service_items (
                    id INTEGER PRIMARY KEY,
                    collection TEXT NOT NULL,
                    uid BLOB NOT NULL UNIQUE,
                    label TEXT NOT NULL,
                    sealed_label BLOB,
                    content_type TEXT NOT NULL,
                    created INTEGER NOT NULL,
                    modified INTEGER NOT NULL,
                    blob BLOB NOT NULL);
                CREATE INDEX IF NOT EXISTS secret_service_items_collection ON secret_service_items (collection);
                \(AttributeTable.secretService.createSQL)
                CREATE TABLE IF NOT EXISTS secret_service_collections (
                    name TEXT PRIMARY KEY,
                    label TEXT NOT NULL,
                    created INTEGER NOT NULL,
                    modified INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS secret_service_aliases (
                    alias TEXT PRIMARY KEY,
                    collection TEXT NOT NULL) WITHOUT ROWID;
                """)
        }
    }

    /// Whether keygate-secret-service has made its tables in this file (it has run here).
    package func hasSecretServiceTables() throws -> Bool {
        guard Self.exists(in: directory) else { return false }
        return try withDatabase(action: "read the store", create: false, writes: false) { db in
            try db.scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'secret_service_items'") == "1"
        }
    }

    // MARK: Items clients made

    /// The items of `collection` (nil: every collection) whose attributes hold every pair of `attributes`.
    package func foreignItems(collection: String?, matching attributes: [String: String],
                              loadBlobs: Bool) throws -> [ForeignItemRow] {
        try withDatabase(action: "search for items", create: false, writes: false) { db in
            try db.readTransaction { try foreignItems(db, collection: collection, matching: attributes, loadBlobs: loadBlobs) }
        }
    }

    /// `loadAttributes`: false leaves each row's attributes empty (a search that answers paths
    /// and lock states only), which saves a statement per row.
    private func foreignItems(_ db: SQLiteDatabase, collection: String?, matching attributes: [String: String],
                              loadBlobs: Bool, loadAttributes: Bool = true) throws -> [ForeignItemRow] {
        let columns = ["id", "collection", "uid", "label", "sealed_label", "content_type", "created", "modified"] + (loadBlobs ? ["blob"] : [])
        var clauses: [String] = []
        var index: Int32 = 1
        if collection != nil { clauses.append("secret_service_items.collection = ?\(index)"); index += 1 }
        let pairs = attributes.sorted { $0.key < $1.key }
        let shape = SearchShape(clientItems: true, pairs: pairs.count, collection: collection != nil, blobs: loadBlobs)
        let sql = Self.searchSQL(shape) {
            Self.matchingSQL(table: "secret_service_items", columns: columns, attributeTable: "secret_service_attributes",
                             pairs: pairs.count, firstParameter: index, clauses: clauses)
        }
        let select = try statement(db, sql)
        var at: Int32 = 1
        if let collection { try select.bind(at, text: collection); at += 1 }
        for (name, value) in pairs {
            try select.bind(at, text: name)
            try select.bind(at + 1, text: value)
            at += 2
        }
        return try foreignRows(db, select, loadBlobs: loadBlobs, loadAttributes: loadAttributes)
    }

    /// The item with row `id`, or nil. `loadAttributes`: false leaves its attributes empty.
    package func foreignItem(id: Int64, loadBlob: Bool, loadAttributes: Bool = true) throws -> ForeignItemRow? {
        try withDatabase(action: "read an item", create: false, writes: false) { db in
            try db.readTransaction {
                let select = try statement(db, loadBlob ? Self.foreignItemWithBlobSQL : Self.foreignItemSQL)
                try select.bind(1, int: id)
                return try foreignRows(db, select, loadBlobs: loadBlob, loadAttributes: loadAttributes).first
            }
        }
    }

    /// One item's row by id, without and with its blob: two fixed texts, not one joined on every read.
    private static let foreignItemSQL = "SELECT id, collection, uid, label, sealed_label, content_type, created, modified "
        + "FROM secret_service_items WHERE id = ?1"
    private static let foreignItemWithBlobSQL = "SELECT id, collection, uid, label, sealed_label, content_type, created, modified, "
        + "blob FROM secret_service_items WHERE id = ?1"

    private func foreignRows(_ db: SQLiteDatabase, _ select: SQLiteStatement, loadBlobs: Bool,
                             loadAttributes: Bool = true) throws -> [ForeignItemRow] {
        let attributesOf = loadAttributes ? try statement(db, AttributeTable.secretService.selectSQL) : nil
        return try AttributeTable.items(select, attributesOf: attributesOf) { id, attributes in
            let sealed = select.blob(4)
            return ForeignItemRow(id: id, collection: select.text(1), uid: select.blob(2), label: select.text(3),
                                  sealedLabel: sealed.isEmpty ? nil : sealed, contentType: select.text(5),
                                  created: UInt64(clamping: select.int(6)), modified: UInt64(clamping: select.int(7)),
                                  attributes: attributes, blob: loadBlobs ? select.blob(8) : nil)
        }
    }

    /// Stores `row` as a new item (its id, created and modified are set here), or, with
    /// `replacing`, over that item in place (its id and creation date kept). Returns the row as
    /// stored.
    package func writeForeignItem(_ row: ForeignItemRow, replacing: Int64?) throws -> ForeignItemRow {
        try withDatabase(action: "store the item", create: true, writes: true) { db in
            try db.writeTransaction {
                let now = Int64(WallClock.seconds)
                var stored = row
                stored.modified = UInt64(now)
                if let replacing {
                    let update = try statement(db, """
                        UPDATE secret_service_items SET label = ?2, sealed_label = ?3, content_type = ?4, modified = ?5, \
                        blob = ?6, uid = ?7 WHERE id = ?1
                        """)
                    try update.bind(1, int: replacing)
                    try update.bind(2, text: row.label)
                    try bindOptional(update, 3, row.sealedLabel)
                    try update.bind(4, text: row.contentType)
                    try update.bind(5, int: now)
                    try update.bind(6, blob: row.blob ?? [])
                    try update.bind(7, blob: row.uid)
                    try update.run()
                    stored.id = replacing
                    let created = try statement(db, "SELECT created FROM secret_service_items WHERE id = ?1")
                    try created.bind(1, int: replacing)
                    stored.created = try created.step() ? UInt64(clamping: created.int(0)) : UInt64(now)
                } else {
                    let insert = try statement(db, """
                        INSERT INTO secret_service_items (collection, uid, label, sealed_label, content_type, created, modified, blob) \
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6, ?7)
                        """)
                    try insert.bind(1, text: row.collection)
                    try insert.bind(2, blob: row.uid)
                    try insert.bind(3, text: row.label)
                    try bindOptional(insert, 4, row.sealedLabel)
                    try insert.bind(5, text: row.contentType)
                    try insert.bind(6, int: now)
                    try insert.bind(7, blob: row.blob ?? [])
                    try insert.run()
                    let find = try statement(db, "SELECT id FROM secret_service_items WHERE uid = ?1")
                    try find.bind(1, blob: row.uid)
                    guard try find.step() else {
                        throw KeychainError.notAvailable("the embedded store \(self.path) lost an item it had just written: "
                                                         + "check the disk, then run keygate doctor")
                    }
                    stored.id = find.int(0)
                    stored.created = UInt64(now)
                }
                try AttributeTable.secretService.replace(stored.id, with: row.attributes) { try statement(db, $0) }
                return stored
            }
        }
    }

    /// Changes an item's label or attributes (nil: unchanged). False when there is no such item.
    @discardableResult
    package func updateForeignItem(id: Int64, label: String?, attributes: [String: String]?) throws -> Bool {
        try withDatabase(action: "change the item", create: false, writes: true) { db in
            try db.writeTransaction {
                let update = try statement(db, "UPDATE secret_service_items SET modified = ?2"
                                            + (label != nil ? ", label = ?3" : "") + " WHERE id = ?1")
                try update.bind(1, int: id)
                try update.bind(2, int: Int64(WallClock.seconds))
                if let label { try update.bind(3, text: label) }
                try update.run()
                let exists = try statement(db, "SELECT count(*) FROM secret_service_items WHERE id = ?1")
                try exists.bind(1, int: id)
                guard try exists.step(), exists.int(0) == 1 else { return false }
                if let attributes { try AttributeTable.secretService.replace(id, with: attributes) { try statement(db, $0) } }
                return true
            }
        }
    }

    /// Deletes an item; false when there was none.
    @discardableResult
    package func deleteForeignItem(id: Int64) throws -> Bool {
        try withDatabase(action: "delete the item", create: false, writes: true) { db in
            try db.writeTransaction {
                let count = try statement(db, "SELECT count(*) FROM secret_service_items WHERE id = ?1")
                try count.bind(1, int: id)
                guard try count.step(), count.int(0) == 1 else { return false }
                let remove = try statement(db, "DELETE FROM secret_service_items WHERE id = ?1")
                try remove.bind(1, int: id)
                try remove.run()
                return true
            }
        }
    }

    /// A prepared statement: kept across calls on a kept connection, else made for this one.
    private func statement(_ db: SQLiteDatabase, _ sql: String) throws -> SQLiteStatement {
        if let kept { return try kept.statement(sql, on: db) }
        return try db.prepare(sql)
    }

    private func bindOptional(_ statement: SQLiteStatement, _ index: Int32, _ bytes: [UInt8]?) throws {
        // An empty blob reads back as "none" (foreignRows).
        try statement.bind(index, blob: bytes ?? [])
    }

    // MARK: Keygate's own items, as the Secret Service sees them

    /// Keygate's items whose stored attribute strings hold every pair of `attributes`.
    package func keygateItems(matching attributes: [String: String], loadBlobs: Bool) throws -> [KeygateItemRow] {
        guard kept != nil || Self.exists(in: directory) else { return [] }
        return try withDatabase(action: "search for items", create: false, writes: false) { db in
            try db.readTransaction { try keygateItems(db, matching: attributes, loadBlobs: loadBlobs) }
        }
    }

    /// Both searches of a Secret Service SearchItems in one read transaction: Keygate's items
    /// matching `keygateAttributes` (nil: none are wanted) and the clients' items of `collection`
    /// (nil: every collection) matching `attributes`. `clientAttributes`: false leaves the clients'
    /// rows without their attributes (a search answers paths and lock states only).
    package func secretServiceSearch(keygateAttributes: [String: String]?, collection: String?, attributes: [String: String],
                                     clientAttributes: Bool = true)
        throws -> (keygate: [KeygateItemRow], clients: [ForeignItemRow]) {
        try withDatabase(action: "search for items", create: false, writes: false) { db in
            try db.readTransaction {
                (try keygateAttributes.map { try keygateItems(db, matching: $0, loadBlobs: false) } ?? [],
                 try foreignItems(db, collection: collection, matching: attributes, loadBlobs: true, loadAttributes: clientAttributes))
            }
        }
    }

    /// What decides a search's SQL text: whose items, how many attribute pairs, whether by
    /// collection, whether with blobs.
    struct SearchShape: Hashable {
        let clientItems: Bool
        let pairs: Int
        let collection: Bool
        let blobs: Bool
    }

    /// Each shape's SQL, made once: building the text cost more than the search it runs. At most
    /// 2 × 65 × 2 × 2 entries (a call brings 64 attributes at most, CallDecoder).
    private static let searchSQLs = Mutex<[SearchShape: String]>([:])

    static func searchSQL(_ shape: SearchShape, _ make: () -> String) -> String {
        if let known = searchSQLs.withLock({ $0[shape] }) { return known }
        let made = make()
        searchSQLs.withLock { $0[shape] = made }
        return made
    }

    /// The rows of `table` (`columns`, by id) that hold `pairs` attribute pairs, bound from
    /// `firstParameter` on as name then value, and meet `clauses`. Each pair is a join on the
    /// attribute table's (name, value, item) index, not `id IN (SELECT …)`: SQLite builds a
    /// temporary b-tree for each IN list on every run, and the first join's index already gives
    /// the rows in id order. An item has one value per name (the primary key), so no row repeats.
    static func matchingSQL(table: String, columns: [String], attributeTable: String, pairs: Int, firstParameter: Int32,
                            clauses: [String]) -> String {
        let selected = columns.map { "\(table).\($0)" }.joined(separator: ", ")
        guard pairs > 0 else {
            return "SELECT \(selected) FROM \(table)" + (clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")) + " ORDER BY id"
        }
        var sql = "SELECT \(selected) FROM \(attributeTable) AS a0"
        var conditions = clauses
        var index = firstParameter
        for pair in 0..<pairs {
            if pair == 0 {
                conditions.insert("a0.name = ?\(index) AND a0.value = ?\(index + 1)", at: 0)
            } else {
                sql += " JOIN \(attributeTable) AS a\(pair) ON a\(pair).item = a0.item AND a\(pair).name = ?\(index) AND a\(pair).value = ?\(index + 1)"
            }
            index += 2
        }
        sql += " JOIN \(table) ON \(table).id = a0.item WHERE " + conditions.joined(separator: " AND ")
        return sql + " ORDER BY a0.item"
    }

    private func keygateItems(_ db: SQLiteDatabase, matching attributes: [String: String], loadBlobs: Bool) throws -> [KeygateItemRow] {
        let pairs = attributes.sorted { $0.key < $1.key }
        let sql = Self.searchSQL(SearchShape(clientItems: false, pairs: pairs.count, collection: false, blobs: loadBlobs)) {
            Self.matchingSQL(table: "items", columns: ["id", "label", "created", "modified"] + (loadBlobs ? ["blob"] : []),
                             attributeTable: "attributes", pairs: pairs.count, firstParameter: 1, clauses: [])
        }
        let select = try statement(db, sql)
        for (i, (name, value)) in pairs.enumerated() {
            try select.bind(Int32(2 * i + 1), text: name)
            try select.bind(Int32(2 * i + 2), text: value)
        }
        return try keygateRows(db, select, loadBlobs: loadBlobs)
    }

    /// Keygate's item with row `id`, or nil.
    package func keygateItem(id: Int64, loadBlob: Bool) throws -> KeygateItemRow? {
        guard kept != nil || Self.exists(in: directory) else { return nil }
        return try withDatabase(action: "read an item", create: false, writes: false) { db in
            try db.readTransaction {
                let select = try statement(db, "SELECT id, label, created, modified" + (loadBlob ? ", blob" : "") + " FROM items WHERE id = ?1")
                try select.bind(1, int: id)
                return try keygateRows(db, select, loadBlobs: loadBlob).first
            }
        }
    }

    /// An item's row id by its identity, or nil.
    package func keygateItemID(_ identity: ItemIdentity) throws -> Int64? {
        guard Self.exists(in: directory) else { return nil }
        return try withDatabase(action: "read an item", create: false, writes: false) { db in
            let select = try statement(db, "SELECT id FROM items WHERE identity = ?1")
            try select.bind(1, blob: identity.storeKey)
            return try select.step() ? select.int(0) : nil
        }
    }

    private func keygateRows(_ db: SQLiteDatabase, _ select: SQLiteStatement, loadBlobs: Bool) throws -> [KeygateItemRow] {
        try AttributeTable.items(select, attributesOf: statement(db, AttributeTable.keygate.selectSQL)) { id, entries in
            // An item Keygate cannot read is left out here; `keygate doctor` names it.
            guard let attributes = ItemAttributeCodec.decode(entries, label: select.text(1),
                                                             created: UInt64(clamping: select.int(2)),
                                                             modified: UInt64(clamping: select.int(3))) else { return nil }
            return KeygateItemRow(id: id, item: StoredItem(attributes: attributes, blob: loadBlobs ? select.blob(4) : nil))
        }
    }

    // MARK: Collections and aliases

    package func foreignCollections() throws -> [ForeignCollectionRow] {
        try withDatabase(action: "list collections", create: false, writes: false) { db in
            let select = try statement(db, "SELECT name, label, created, modified FROM secret_service_collections ORDER BY name")
            var out: [ForeignCollectionRow] = []
            while try select.step() {
                out.append(ForeignCollectionRow(name: select.text(0), label: select.text(1),
                                                created: UInt64(clamping: select.int(2)), modified: UInt64(clamping: select.int(3))))
            }
            return out
        }
    }

    /// Creates or relabels a collection.
    package func writeForeignCollection(_ row: ForeignCollectionRow) throws {
        try withDatabase(action: "store the collection", create: true, writes: true) { db in
            try db.writeTransaction {
                let upsert = try statement(db, """
                    INSERT INTO secret_service_collections (name, label, created, modified) VALUES (?1, ?2, ?3, ?4) \
                    ON CONFLICT (name) DO UPDATE SET label = excluded.label, modified = excluded.modified
                    """)
                try upsert.bind(1, text: row.name)
                try upsert.bind(2, text: row.label)
                try upsert.bind(3, int: Int64(clamping: row.created))
                try upsert.bind(4, int: Int64(clamping: row.modified))
                try upsert.run()
            }
        }
    }

    /// Deletes a collection, its items and the aliases that name it.
    package func deleteForeignCollection(_ name: String) throws {
        try withDatabase(action: "delete the collection", create: false, writes: true) { db in
            try db.writeTransaction {
                for sql in ["DELETE FROM secret_service_items WHERE collection = ?1",
                            "DELETE FROM secret_service_collections WHERE name = ?1",
                            "DELETE FROM secret_service_aliases WHERE collection = ?1"] {
                    let statement = try statement(db, sql)
                    try statement.bind(1, text: name)
                    try statement.run()
                }
            }
        }
    }

    package func foreignAliases() throws -> [String: String] {
        try withDatabase(action: "read the aliases", create: false, writes: false) { db in
            let select = try statement(db, "SELECT alias, collection FROM secret_service_aliases")
            var out: [String: String] = [:]
            while try select.step() { out[select.text(0)] = select.text(1) }
            return out
        }
    }

    /// Points `alias` at `collection`; nil removes it.
    package func writeForeignAlias(_ alias: String, collection: String?) throws {
        try withDatabase(action: "store the alias", create: true, writes: true) { db in
            try db.writeTransaction {
                let statement = try statement(db, collection == nil ? "DELETE FROM secret_service_aliases WHERE alias = ?1"
                    : "INSERT INTO secret_service_aliases (alias, collection) VALUES (?1, ?2) "
                        + "ON CONFLICT (alias) DO UPDATE SET collection = excluded.collection")
                try statement.bind(1, text: alias)
                if let collection { try statement.bind(2, text: collection) }
                try statement.run()
            }
        }
    }
}
