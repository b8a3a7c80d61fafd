// The embedded store's schema: the tables Keygate's items are kept in, and the numbered steps
// that move a file an older Keygate wrote to the current version, inside the transaction that
// records it. A file from a newer Keygate is refused, never rewritten. A read that cannot write
// (a read-only folder) takes an older file as it is when its pending steps change nothing.
//
// Delegates: the statements to SQLiteDatabase, the attribute table to AttributeTable, an item's
// key to ItemIdentity.storeKey through ItemAttributeCodec.
import KeygateCore

/// The schema of the embedded store at `path` (named in the errors).
struct EmbeddedSchema {
    let path: String

    /// One step of the schema: moves a file from `from` to `from + 1`, inside the transaction
    /// that records the new version. `isNeeded`: whether a file at `from` holds rows the step
    /// changes; a read takes a file whose pending steps change nothing as it is (reads never write).
    private struct Migration {
        let from: Int64
        let isNeeded: (SQLiteDatabase) throws -> Bool
        let run: (SQLiteDatabase) throws -> Void
    }

    /// The steps, in order. Each step is its own entry: a new one goes at the end, with the next
    /// version number (and EmbeddedStore.schemaVersion raised to match).
    private var migrations: [Migration] {
        [
            // 1 to 2: kSecAttrSynchronizable joins the primary key.
            Migration(from: 1, isNeeded: { try Self.hasItems(with: .synchronizable, in: $0) },
                      run: { try self.rekeyItems(with: .synchronizable, in: $0) }),
            // 2 to 3: kSecAttrAccessGroup joins the primary key.
            Migration(from: 2, isNeeded: { try Self.hasItems(with: .accessGroup, in: $0) },
                      run: { try self.rekeyItems(with: .accessGroup, in: $0) }),
        ]
    }

    /// The schema version is kept twice: in the `schema_version` table, which older Keygates read,
    /// and in the file header's `user_version`, which a connection reads first, without compiling
    /// a statement over the schema (docs/DECISIONS.md). A file that has only the table
    /// (written before the header was used) is checked by the table, and given the header by
    /// the next connection that writes. A later schema must set both.
    /// Returns whether the identity index holds the current keys: false only for an older file
    /// whose pending steps would change it and which this connection cannot write (a read of a
    /// read-only folder), whose items are then found by their attributes instead.
    func migrate(_ db: SQLiteDatabase, writes: Bool, canWrite: Bool) throws -> Bool {
        var version: Int64 = 0
        if let header = try db.scalarText("PRAGMA user_version").flatMap({ Int64($0) }), header != 0 {
            try refuseNewer(header)
            if header == EmbeddedStore.schemaVersion { return true }
            version = header
        }
        let hasVersion = try db.scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        if hasVersion == "1", let text = try db.scalarText("SELECT max(version) FROM schema_version"), let table = Int64(text) {
            try refuseNewer(table)
            version = max(version, table)
            if version == EmbeddedStore.schemaVersion {
                if writes && canWrite { try db.execute("PRAGMA user_version = \(EmbeddedStore.schemaVersion)") }
                return true
            }
        }
        let pending = migrations.filter { $0.from >= version }
        if version > 0, !writes, try pending.allSatisfy({ try !$0.isNeeded(db) }) { return true }
        if !canWrite { return false }
        try db.writeTransaction {
            try db.execute("""
                CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
                CREATE TABLE IF NOT EXISTS items (
                    id INTEGER PRIMARY KEY,
                    identity BLOB NOT NULL,
                    label TEXT NOT NULL,
                    created INTEGER NOT NULL,
                    modified INTEGER NOT NULL,
                    blob BLOB NOT NULL);
                CREATE UNIQUE INDEX IF NOT EXISTS items_identity ON items (identity);
                \(AttributeTable.keygate.createSQL)
                """)
            for step in pending { try step.run(db) }
            try db.execute("""
                DELETE FROM schema_version;
                INSERT INTO schema_version (version) VALUES (\(EmbeddedStore.schemaVersion));
                PRAGMA user_version = \(EmbeddedStore.schemaVersion);
                """)
        }
        return true
    }

    /// Whether any item has `field` set (a non-empty attribute).
    private static func hasItems(with field: ItemField, in db: SQLiteDatabase) throws -> Bool {
        try db.scalarText("SELECT count(*) FROM attributes WHERE name = '\(field.attributeName)' AND value != ''") != "0"
    }

    /// A field joins the primary key: the identity column of every item that has it set becomes
    /// its whole key (ItemIdentity.storeKey); every other row's is already. The earlier schema's
    /// index held the key without the field, so it held no two items that differ only in it, and
    /// no two rows collide. Run again on a file another process already moved, it rewrites the
    /// same bytes. Nothing else changes: the sealed blobs are bound to the item's name, which the
    /// key's tail is not part of (ItemField.keyTail).
    private func rekeyItems(with field: ItemField, in db: SQLiteDatabase) throws {
        let select = try db.prepare("SELECT DISTINCT item FROM attributes WHERE name = ?1 AND value != ''")
        try select.bind(1, text: field.attributeName)
        var ids: [Int64] = []
        while try select.step() { ids.append(select.int(0)) }
        let attributesOf = try db.prepare(AttributeTable.keygate.selectSQL)
        let rekey = try db.prepare("UPDATE items SET identity = ?1 WHERE id = ?2")
        for id in ids {
            let entries = try AttributeTable.attributes(of: id, reading: attributesOf)
            guard let attributes = ItemAttributeCodec.decode(entries, label: "", created: 0, modified: 0) else {
                throw KeychainError.decode("the embedded store \(path) holds an item (row \(id)) whose attributes Keygate "
                                           + "cannot read: restore the file from a backup, or remove that item with sqlite3")
            }
            rekey.reset()
            try rekey.bind(1, blob: attributes.identity.storeKey)
            try rekey.bind(2, int: id)
            try rekey.run()
        }
    }

    private func refuseNewer(_ version: Int64) throws {
        guard version <= EmbeddedStore.schemaVersion else {
            throw KeychainError.notAvailable("the embedded store \(path) was written by a newer Keygate (schema \(version), "
                                             + "this one knows \(EmbeddedStore.schemaVersion)): upgrade keygate")
        }
    }
}
