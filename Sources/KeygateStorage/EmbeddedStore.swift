// The ItemStore for hosts with no Secret Service: a SQLite database at
// <data dir>/items.sqlite (mode 0600 in the 0700 data folder) holding only what the
// Secret Service would hold: each item's attributes (ItemAttributeCodec's strings, the
// same as the Secret Service's) and its sealed blob. Never plaintext.
//
// Crash safety: WAL journal, synchronous=FULL, and every write is one BEGIN IMMEDIATE
// transaction, so a process killed at any instant leaves each item old or new.
// Duplicates are refused by the database itself (a UNIQUE index on the identity's
// primary key bytes, ItemIdentity.storeKey: schema 2; schema 1 keyed the name alone, before
// kSecAttrSynchronizable joined the key). Other processes: a busy timeout plus bounded retries, both within
// the store's deadline. SQLite calls go through SQLiteDatabase; errors are worded here.
import KeygateCore

package final class EmbeddedStore: ItemStore {
    static let fileName = "items.sqlite"
    /// 2: the identity column is ItemIdentity.storeKey (a synchronizable item's key carries the
    /// flag). A schema-1 file is moved to 2 by the first connection that opens it.
    static let schemaVersion: Int64 = 2
    static let backendName = "embedded (SQLite)"

    package let directory: String
    let deadline: Duration
    /// A connection kept open across calls (keygate-secret-service); nil: one per call.
    let kept: KeptConnection?
    package var path: String { directory + "/" + Self.fileName }

    package init(directory: String, deadline: Duration = .seconds(5), keepOpen: Bool = false) {
        self.directory = directory
        self.deadline = deadline
        kept = keepOpen ? KeptConnection() : nil
    }

    /// Whether the database file exists (the embedded store has been used).
    package static func exists(in directory: String) -> Bool {
        if case .success = FileStatus.of(directory + "/" + fileName, links: .refuse) { return true }
        return false
    }

    // MARK: ItemStore

    /// One row holds everything: every detail is read.
    package func search(_ query: ItemQuery, loadBlobs: Bool, detail: ItemDetail) throws -> [StoredItem] {
        guard Self.exists(in: directory) else { return [] }
        return try withDatabase(action: "search for items", create: false, writes: false) { db in
            try db.readTransaction { try self.items(in: db, matching: query, loadBlobs: loadBlobs).map { $0.item } }
        }
    }

    package func create(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws {
        let identity = attributes.identity.storeKey
        let label = ItemAttributeCodec.label(for: attributes)
        let encoded = ItemAttributeCodec.encode(attributes)
        try withDatabase(action: "store the item", create: true, writes: true) { db in
            try db.writeTransaction {
                let now = Int64(WallClock.seconds)
                // The UNIQUE index judges duplicates; with replace, the upsert updates the row
                // in place and leaves its creation date alone.
                let insert = try db.prepare(replace
                    ? "INSERT INTO items (identity, label, created, modified, blob) VALUES (?1, ?2, ?3, ?3, ?4) "
                        + "ON CONFLICT (identity) DO UPDATE SET label = excluded.label, modified = excluded.modified, "
                        + "blob = excluded.blob"
                    : "INSERT INTO items (identity, label, created, modified, blob) VALUES (?1, ?2, ?3, ?3, ?4)")
                try insert.bind(1, blob: identity)
                try insert.bind(2, text: label)
                try insert.bind(3, int: now)
                try insert.bind(4, blob: blob)
                do {
                    try insert.run()
                } catch let error as SQLiteError where error.isConstraintUnique {
                    throw KeychainError.duplicateItem("an item for \(attributes.identity.displayName) already exists: "
                                                      + "update it, or delete it first")
                }
                let find = try db.prepare("SELECT id FROM items WHERE identity = ?1")
                try find.bind(1, blob: identity)
                guard try find.step() else {
                    throw KeychainError.notAvailable("the embedded store \(self.path) lost an item it had just written: "
                                                     + "check the disk, then run keygate doctor")
                }
                let id = find.int(0)
                let clear = try db.prepare("DELETE FROM attributes WHERE item = ?1")
                try clear.bind(1, int: id)
                try clear.run()
                let add = try db.prepare("INSERT INTO attributes (item, name, value) VALUES (?1, ?2, ?3)")
                for (name, value) in encoded.sorted(by: { $0.key < $1.key }) {
                    add.reset()
                    try add.bind(1, int: id)
                    try add.bind(2, text: name)
                    try add.bind(3, text: value)
                    try add.run()
                }
            }
        }
    }

    @discardableResult
    package func delete(_ query: ItemQuery) throws -> Int {
        guard Self.exists(in: directory) else { return 0 }
        return try withDatabase(action: "delete items", create: false, writes: true) { db in
            try db.writeTransaction {
                let found = try self.items(in: db, matching: query, loadBlobs: false)
                let remove = try db.prepare("DELETE FROM items WHERE id = ?1")
                for entry in found {
                    remove.reset()
                    try remove.bind(1, int: entry.id)
                    try remove.run()
                }
                return found.count
            }
        }
    }

    package func status() throws -> StoreStatus {
        if Self.exists(in: directory) {
            // Opening checks the file, the schema and the journal mode.
            try withDatabase(action: "open", create: false, writes: false) { _ in }
        }
        return StoreStatus(backend: Self.backendName, collection: path, locked: false)
    }

    /// SQLite's own consistency check: "ok" when the file is sound.
    func integrityCheck() throws -> String {
        try withDatabase(action: "check", create: false, writes: false) { db in try db.scalarText("PRAGMA integrity_check") ?? "" }
    }

    /// The database's journal mode ("wal").
    func journalMode() throws -> String {
        try withDatabase(action: "check", create: false, writes: false) { db in try db.scalarText("PRAGMA journal_mode") ?? "" }
    }

    // MARK: - Queries

    private struct Row {
        let id: Int64
        let item: StoredItem
    }

    /// Items whose stored attributes equal every attribute the query constrains (as the Secret
    /// Service matches), then filtered by `query.matches` (label and the rest, client-side). The
    /// query for one item (a read, an update) goes by the UNIQUE identity index instead: one
    /// lookup, in a statement that SQLite compiles and runs in a fraction of the time of one
    /// subquery per attribute (docs/DECISIONS.md, issue 19).
    private func items(in db: SQLiteDatabase, matching query: ItemQuery, loadBlobs: Bool) throws -> [Row] {
        let columns = "SELECT id, label, created, modified\(loadBlobs ? ", blob" : "") FROM items"
        let select: SQLiteStatement
        if let identity = query.exactIdentity {
            select = try db.prepare(columns + " WHERE identity = ?1")
            try select.bind(1, blob: identity.storeKey)
        } else {
            let constraints = ItemAttributeCodec.encode(query).sorted { $0.key < $1.key }
            var sql = columns
            for (i, _) in constraints.enumerated() {
                sql += i == 0 ? " WHERE " : " AND "
                sql += "id IN (SELECT item FROM attributes WHERE name = ?\(2 * i + 1) AND value = ?\(2 * i + 2))"
            }
            select = try db.prepare(sql + " ORDER BY id")
            for (i, (name, value)) in constraints.enumerated() {
                try select.bind(Int32(2 * i + 1), text: name)
                try select.bind(Int32(2 * i + 2), text: value)
            }
        }
        let attributesOf = try db.prepare("SELECT name, value FROM attributes WHERE item = ?1")
        var rows: [Row] = []
        while try select.step() {
            let id = select.int(0)
            let label = select.text(1)
            attributesOf.reset()
            try attributesOf.bind(1, int: id)
            var entries: [String: String] = [:]
            while try attributesOf.step() { entries[attributesOf.text(0)] = attributesOf.text(1) }
            guard let attributes = ItemAttributeCodec.decode(entries, label: label,
                                                             created: UInt64(clamping: select.int(2)),
                                                             modified: UInt64(clamping: select.int(3))) else {
                throw KeychainError.decode("the embedded store \(path) holds an item (\"\(label)\") whose attributes "
                                           + "Keygate cannot read: restore the file from a backup, or remove that item "
                                           + "with sqlite3")
            }
            guard query.matches(attributes) else { continue }
            rows.append(Row(id: id, item: StoredItem(attributes: attributes, blob: loadBlobs ? select.blob(4) : nil)))
        }
        return rows
    }

    // MARK: - Opening, retries, errors

    /// Opens the database, runs `body` and closes it. A busy database is retried until the
    /// deadline; every other SQLite failure becomes a KeychainError that says what to do.
    /// `writes`: whether `body` changes the file (see `open`).
    func withDatabase<R>(action: String, create: Bool, writes: Bool,
                                 _ body: (SQLiteDatabase) throws -> R) throws -> R {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while true {
            do {
                if let kept {
                    // Made once, for writes too (create, pragmas): its process writes.
                    return try kept.withConnection(path: path, open: { try open(create: true, writes: true, until: end, clock: clock) }, body)
                }
                let db = try open(create: create, writes: writes, until: end, clock: clock)
                return try body(db)
            } catch let error as SQLiteError {
                if error.isBusy, clock.now < end {
                    // 5 to 15 ms, jittered so that waiting writers do not retry in step.
                    Pause.sleep(nanoseconds: 5_000_000 + Int(Sodium.randomBytes(1).first ?? 0) * 40_000)
                    continue
                }
                throw failure(error, action: action)
            }
        }
    }

    /// Every connection keeps the -wal and -shm files at close: creating, sizing and unlinking
    /// them again in each one-command process was most of an embedded read's system time (issue
    /// 19). A connection that writes sets what writes need: foreign keys (a delete cascades to the
    /// item's attributes), full syncs, WAL mode (persistent in the file, so set once), and a WAL
    /// cut back to empty by the checkpoint at close, so that old page images do not stay in it.
    /// A read needs none of them. Both check the schema version.
    private func open(create: Bool, writes: Bool, until end: ContinuousClock.Instant,
                      clock: ContinuousClock) throws -> SQLiteDatabase {
        if create { try PrivateDirectory.make(directory) }
        let db: SQLiteDatabase
        if try ensurePrivateFile(readOnlyFileSystemIsFine: !writes) {
            db = try SQLiteDatabase(path: path, create: false)
        } else {
            // A read needs no write (issue 39, 1): on a read-only file system, read the file as it is.
            db = try Self.openReadingOnly(path)
        }
        let left = end - clock.now
        let ms = max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
        db.setBusyTimeout(milliseconds: Int32(clamping: ms))
        db.keepWriteAheadLogFiles()
        if writes { try prepareForWrites(db) }
        try migrateSchema(db, writes: writes)
        return db
    }

    /// The file read-only, with its WAL when SQLite can use it there, else as an immutable file.
    private static func openReadingOnly(_ path: String) throws -> SQLiteDatabase {
        if let db = try? SQLiteDatabase(readingOnly: path, immutable: false), (try? db.scalarText("PRAGMA user_version")) != nil {
            return db
        }
        return try SQLiteDatabase(readingOnly: path, immutable: true)
    }

    private func prepareForWrites(_ db: SQLiteDatabase) throws {
        try db.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 0")
        if try db.scalarText("PRAGMA journal_mode")?.lowercased() != "wal" {
            guard try db.scalarText("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                throw KeychainError.notAvailable("could not switch \(path) to WAL mode: check that its folder is on a local "
                                                 + "file system that you can write")
            }
        }
    }

    /// Creates the file 0600 before SQLite does (SQLite would use 0644 minus the umask; its
    /// -wal and -shm files copy this file's mode), and refuses a link or another owner's file.
    /// Returns false when the file is on a read-only file system and `readOnlyFileSystemIsFine`
    /// (a read): the file is then checked the same way, opened read-only.
    private func ensurePrivateFile(readOnlyFileSystemIsFine: Bool = false) throws -> Bool {
        var fd = SafeFile.open(path, .readWrite | .create | .nonBlocking, mode: 0o600, links: .refuse)
        var writable = true
        if fd < 0, SystemErrno.last == .readOnlyFileSystem, readOnlyFileSystemIsFine {
            fd = SafeFile.open(path, .nonBlocking, links: .refuse)
            writable = false
        }
        guard fd >= 0 else {
            let e = SystemErrno.last
            if e == .readOnlyFileSystem {
                throw KeychainError.notAvailable("""
                    cannot write the embedded store \(path): the file system is read-only. Reads still work; to add or change \
                    items, make it writable (remount it read-write). Pointing XDG_DATA_HOME elsewhere would start an empty \
                    keychain there, away from these items
                    """)
            }
            if e == .noSpace || e == .quotaExceeded {
                throw KeychainError.notAvailable("cannot create the embedded store \(path): the disk is full; free some space, then try again")
            }
            if e == .symbolicLink {
                throw KeychainError.notAvailable("\(path) is a symbolic link, and Keygate does not follow links for its own "
                                                 + "files: replace the link with the real file")
            }
            throw KeychainError.notAvailable("could not open the embedded store \(path): \(e.text); "
                                             + "check that it and its folder belong to you (modes 0600 and 0700)")
        }
        defer { Descriptor.close(fd) }
        guard case .success(let info) = FileStatus.of(descriptor: fd), info.isRegular else {
            throw KeychainError.notAvailable("\(path) is not a regular file: move it aside and try again")
        }
        guard info.uid == ProcessIdentity.euid else {
            throw KeychainError.notAvailable("\(path) belongs to uid \(info.uid), not to you (uid \(ProcessIdentity.euid)): "
                                             + "fix its owner, or move it aside")
        }
        if writable, info.mode & 0o077 != 0 { FileSystem.changeMode(descriptor: fd, 0o600) }
        return writable
    }

    /// The schema version is kept twice: in the `schema_version` table, which older Keygates read,
    /// and in the file header's `user_version`, which a connection reads first, without compiling
    /// a statement over the schema (docs/DECISIONS.md, issue 19). A file that has only the table
    /// (written before the header was used) is checked by the table, and given the header by
    /// the next connection that writes. A later schema must set both.
    private func migrateSchema(_ db: SQLiteDatabase, writes: Bool) throws {
        if let header = try db.scalarText("PRAGMA user_version").flatMap({ Int64($0) }), header != 0 {
            try refuseNewer(header)
            if header == Self.schemaVersion { return }
        }
        let hasVersion = try db.scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        if hasVersion == "1", let text = try db.scalarText("SELECT max(version) FROM schema_version"), let version = Int64(text) {
            try refuseNewer(version)
            if version == Self.schemaVersion {
                if writes { try db.execute("PRAGMA user_version = \(Self.schemaVersion)") }
                return
            }
            // A schema-1 file with no synchronizable item is keyed as schema 2 already: a read
            // takes it as it is (reads never write), and the next write moves it.
            if version == 1, !writes,
               try db.scalarText("SELECT count(*) FROM attributes WHERE name = 'synchronizable' AND value = '1'") == "0" {
                return
            }
        }
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
                CREATE TABLE IF NOT EXISTS attributes (
                    item INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    value TEXT NOT NULL,
                    PRIMARY KEY (item, name)) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS attributes_match ON attributes (name, value, item);
                """)
            try rekeySynchronizableItems(db)
            try db.execute("""
                DELETE FROM schema_version;
                INSERT INTO schema_version (version) VALUES (\(Self.schemaVersion));
                PRAGMA user_version = \(Self.schemaVersion);
                """)
        }
    }

    /// Schema 1 to 2: a synchronizable item's identity column becomes its whole primary key
    /// (ItemIdentity.storeKey); every other row's is already (its name, byte for byte). Schema 1
    /// held no twins (its index was on the name), so no two rows collide. Run again on a file
    /// another process already moved, it rewrites the same bytes. Nothing else changes: the
    /// sealed blobs are bound to the name, which the flag is not part of.
    private func rekeySynchronizableItems(_ db: SQLiteDatabase) throws {
        let rows = try items(in: db, matching: ItemQuery(synchronizable: true), loadBlobs: false)
        let rekey = try db.prepare("UPDATE items SET identity = ?1 WHERE id = ?2")
        for row in rows {
            rekey.reset()
            try rekey.bind(1, blob: row.item.attributes.identity.storeKey)
            try rekey.bind(2, int: row.id)
            try rekey.run()
        }
    }

    private func refuseNewer(_ version: Int64) throws {
        guard version <= Self.schemaVersion else {
            throw KeychainError.notAvailable("the embedded store \(path) was written by a newer Keygate (schema \(version), "
                                             + "this one knows \(Self.schemaVersion)): upgrade keygate")
        }
    }

    private func failure(_ error: SQLiteError, action: String) -> KeychainError {
        let detail = " (sqlite: \(error.message))"
        switch error.primary {
        case SQLiteCode.busy, SQLiteCode.locked:
            return .notAvailable("the embedded store \(path) stayed locked by another process for more than "
                                 + "\(deadline.components.seconds) s: try again; if it persists, find the process "
                                 + "holding it (fuser \(path))")
        case SQLiteCode.readOnly:
            return .notAvailable("cannot \(action) in the embedded store \(path): it is read-only (a read-only mount, or "
                                 + "the file or its folder is not writable by you); fix that, then try again" + detail)
        case SQLiteCode.full:
            return .notAvailable("cannot \(action): the disk holding \(path) is full; nothing was changed, free some "
                                 + "space, then try again")
        case SQLiteCode.corrupt, SQLiteCode.notADatabase:
            return .notAvailable("the embedded store \(path) is corrupt or is not a Keygate database: move it aside "
                                 + "(mv \(path) \(path).broken) and restore it from a backup, or try "
                                 + "`sqlite3 \(path) .recover`; its secrets are sealed, so copies are safe to keep" + detail)
        case SQLiteCode.cannotOpen, SQLiteCode.permission, SQLiteCode.auth:
            return .notAvailable("could not open the embedded store \(path): check that it and its folder belong to "
                                 + "you (modes 0600 and 0700) and that the disk is mounted" + detail)
        case SQLiteCode.ioError:
            return .notAvailable("an I/O error stopped Keygate while it tried to \(action) in \(path): check the disk "
                                 + "(dmesg), then try again" + detail)
        case SQLiteCode.noMemory:
            return .notAvailable("out of memory while trying to \(action) in \(path): free some memory, then try again")
        default:
            return .notAvailable("the embedded store \(path) could not \(action): run keygate doctor, then try again" + detail)
        }
    }
}
