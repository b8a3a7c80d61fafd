// The ItemStore for hosts with no Secret Service: a SQLite database at
// <data dir>/items.sqlite (mode 0600 in the 0700 data folder) holding only what the
// Secret Service would hold: each item's attributes (ItemAttributeCodec's strings, the
// same as the Secret Service's) and its sealed blob. Never plaintext.
//
// Crash safety: WAL journal, synchronous=FULL, and every write is one BEGIN IMMEDIATE
// transaction, so a process killed at any instant leaves each item old or new.
// Duplicates are refused by the database itself (a UNIQUE index on the identity's
// primary key bytes, ItemIdentity.storeKey). The schema moves forward one numbered step at a
// time (`migrations`). A folder or file that cannot be written (a read-only mount, `chattr +i`)
// is read as it is, and a write there says so. Other processes: a busy timeout plus bounded
// retries, both within the store's deadline. SQLite calls go through SQLiteDatabase; errors are
// worded here.
import KeygateCore

package final class EmbeddedStore: ItemStore {
    static let fileName = "items.sqlite"
    /// The identity column is ItemIdentity.storeKey: 1 keyed the name alone; 2 added a
    /// synchronizable item's flag; 3 an item's access group. An older file is moved forward by
    /// the first connection that may write it (`migrations`).
    static let schemaVersion: Int64 = 3
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
        return try withDatabase(action: "search for items", create: false, writes: false) { db, keyed in
            try db.readTransaction {
                try self.items(in: db, matching: query, loadBlobs: loadBlobs, byIdentity: keyed).map { $0.item }
            }
        }
    }

    package func create(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws {
        let identity = attributes.identity.storeKey
        let label = ItemAttributeCodec.label(for: attributes)
        let encoded = ItemAttributeCodec.encode(attributes)
        try withDatabase(action: "store the item", create: true, writes: true) { db, _ in
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
                try AttributeTable.keygate.replace(find.int(0), with: encoded, prepare: db.prepare)
            }
        }
    }

    @discardableResult
    package func delete(_ query: ItemQuery) throws -> Int {
        guard Self.exists(in: directory) else { return 0 }
        return try withDatabase(action: "delete items", create: false, writes: true) { db, _ in
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
            try withDatabase(action: "open", create: false, writes: false) { _, _ in }
        }
        return StoreStatus(backend: Self.backendName, collection: path, locked: false)
    }

    /// SQLite's own consistency check: "ok" when the file is sound.
    func integrityCheck() throws -> String {
        try withDatabase(action: "check", create: false, writes: false) { db, _ in try db.scalarText("PRAGMA integrity_check") ?? "" }
    }

    /// The database's journal mode ("wal").
    func journalMode() throws -> String {
        try withDatabase(action: "check", create: false, writes: false) { db, _ in try db.scalarText("PRAGMA journal_mode") ?? "" }
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
    /// subquery per attribute (docs/DECISIONS.md). `byIdentity` false: the file is keyed
    /// by an older schema that this connection may not move (a read of a read-only file), so the
    /// index is not used.
    private func items(in db: SQLiteDatabase, matching query: ItemQuery, loadBlobs: Bool,
                       byIdentity: Bool = true) throws -> [Row] {
        let columns = "SELECT id, label, created, modified\(loadBlobs ? ", blob" : "") FROM items"
        let select: SQLiteStatement
        if byIdentity, let identity = query.exactIdentity {
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
        return try AttributeTable.items(select, attributesOf: db.prepare(AttributeTable.keygate.selectSQL)) { id, entries in
            let label = select.text(1)
            guard let attributes = ItemAttributeCodec.decode(entries, label: label,
                                                             created: UInt64(clamping: select.int(2)),
                                                             modified: UInt64(clamping: select.int(3))) else {
                throw KeychainError.decode("the embedded store \(path) holds an item (\"\(label)\") whose attributes "
                                           + "Keygate cannot read: restore the file from a backup, or remove that item "
                                           + "with sqlite3")
            }
            guard query.matches(attributes) else { return nil }
            return Row(id: id, item: StoredItem(attributes: attributes, blob: loadBlobs ? select.blob(4) : nil))
        }
    }

    // MARK: - Opening, retries, errors

    /// `withDatabase` for a body that reads the Secret Service's own tables, which the identity
    /// index does not concern.
    func withDatabase<R>(action: String, create: Bool, writes: Bool, _ body: (SQLiteDatabase) throws -> R) throws -> R {
        try withDatabase(action: action, create: create, writes: writes) { db, _ in try body(db) }
    }

    /// Opens the database, runs `body` and closes it. A busy database is retried until the
    /// deadline; every other SQLite failure becomes a KeychainError that says what to do.
    /// `writes`: whether `body` changes the file (see `open`).
    /// `body` gets the database and whether its identity index holds the current keys.
    func withDatabase<R>(action: String, create: Bool, writes: Bool,
                         _ body: (SQLiteDatabase, Bool) throws -> R) throws -> R {
        let clock = ContinuousClock()
        let end = clock.now + deadline
        while true {
            do {
                if let kept {
                    // Made once, for writes too (create, pragmas): its process writes. Only the
                    // Secret Service daemon keeps a connection, so each file it opens gets its tables.
                    return try kept.withConnection(path: path, open: {
                        let made = try open(create: true, writes: true, until: end, clock: clock)
                        try Self.ensureSecretServiceTables(made.0)
                        return made
                    }, body)
                }
                let (db, keyed) = try open(create: create, writes: writes, until: end, clock: clock)
                return try body(db, keyed)
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
    /// them again in each one-command process is most of an embedded read's system time
    /// (docs/DECISIONS.md, "A read pays for its own work only"). A connection that writes sets what writes need: foreign keys (a delete
    /// cascades to the item's attributes), full syncs, WAL mode (persistent in the file, so set
    /// once), and a WAL cut back to empty by the checkpoint at close, so that old page images do
    /// not stay in it. A read needs none of them. Both check the schema version. Also returns
    /// whether the identity index holds the current keys (`migrateSchema`).
    private func open(create: Bool, writes: Bool, until end: ContinuousClock.Instant,
                      clock: ContinuousClock) throws -> (SQLiteDatabase, Bool) {
        if create { try PrivateDirectory.make(directory) }
        let db: SQLiteDatabase
        let writable = try ensurePrivateFile(readingIsEnough: !writes)
        if writable {
            db = try SQLiteDatabase(path: path, create: false)
        } else {
            // A read needs no write: where the folder or the file cannot be written, read the file as it is.
            db = try Self.openReadingOnly(path)
        }
        let left = end - clock.now
        let ms = max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)
        db.setBusyTimeout(milliseconds: Int32(clamping: ms))
        if writable { db.keepWriteAheadLogFiles() }
        if writes { try prepareForWrites(db) }
        let keyed = try migrateSchema(db, writes: writes, canWrite: writable)
        return (db, keyed)
    }

    /// The file read-only, with its WAL when SQLite can use it there: its -wal and -shm files are
    /// kept, and SQLite reads them read-only (measured on SQLite 3.40: it tries each O_RDWR|O_CREAT,
    /// meets EPERM or EROFS, and opens it O_RDONLY). Without a -shm it cannot, and the file is
    /// opened as immutable (no locks, no WAL: only what the main file holds), which is the whole
    /// store only while the -wal holds nothing: a -wal with commits in it (a writer killed before
    /// its checkpoint) is refused rather than read without them.
    private static func openReadingOnly(_ path: String) throws -> SQLiteDatabase {
        if let db = try? SQLiteDatabase(readingOnly: path, immutable: false), (try? db.scalarText("PRAGMA user_version")) != nil {
            return db
        }
        if case .success(let wal) = FileStatus.of(path + "-wal", links: .refuse), wal.size > 0 {
            throw KeychainError.notAvailable("""
                cannot read the embedded store \(path) in a read-only folder: its write-ahead log (\(path)-wal) holds changes \
                SQLite can read only with the -shm file beside it, which is missing; make the folder writable once (any keygate \
                command then folds the log into the file), then try again
                """)
        }
        return try SQLiteDatabase(readingOnly: path, immutable: true)
    }

    private func prepareForWrites(_ db: SQLiteDatabase) throws {
        // secure_delete: a row's old text (a label in the clear before it was sealed) is overwritten
        // with zeros when the row changes, not left in a free page of the file.
        try db.execute("PRAGMA foreign_keys = ON; PRAGMA synchronous = FULL; PRAGMA journal_size_limit = 0; PRAGMA secure_delete = ON")
        if try db.scalarText("PRAGMA journal_mode")?.lowercased() != "wal" {
            guard try db.scalarText("PRAGMA journal_mode = WAL")?.lowercased() == "wal" else {
                throw KeychainError.notAvailable("could not switch \(path) to WAL mode: check that its folder is on a local "
                                                 + "file system that you can write")
            }
        }
    }

    /// Creates the file 0600 before SQLite does (SQLite would use 0644 minus the umask; its
    /// -wal and -shm files copy this file's mode), and refuses a link or another owner's file.
    /// Returns false when the file or its folder cannot be written (a read-only mount, `chattr
    /// +i`, no write permission) and `readingIsEnough` (a read): the file is then checked the
    /// same way, to be opened read-only. A write there is refused, naming the folder.
    ///
    /// An existing file is checked by its path (lstat, access), never opened here: closing any
    /// descriptor of the database drops every POSIX lock this process holds on it, SQLite's
    /// locks of the other threads' connections included, and a writer in another process then
    /// resets the WAL under their reads (SQLITE_IOERR_SHORT_READ, measured: docs/DECISIONS.md).
    /// Only a file that does not exist yet is opened, with O_EXCL, so no connection holds it.
    private func ensurePrivateFile(readingIsEnough: Bool = false) throws -> Bool {
        // SQLite writes the -wal and -shm files beside the database: a folder it cannot write is
        // as read-only as the file (access(2): EROFS for a read-only mount, EPERM for an immutable folder).
        var unwritable: SystemErrno?
        if !FileSystem.allows(.writable, directory) {
            let why = SystemErrno.last
            if FileSystem.allows(.exists, directory) { unwritable = why }
        }
        if unwritable == nil, case .failure(.noEntry) = FileStatus.of(path, links: .refuse) {
            let fd = SafeFile.open(path, .readWrite | .create | .exclusive | .nonBlocking, mode: 0o600, links: .refuse)
            if fd >= 0 {
                Descriptor.close(fd)
            } else if SystemErrno.last != .exists {
                let e = SystemErrno.last
                if Self.meansReadOnly(e) {
                    unwritable = e
                } else if e == .noSpace || e == .quotaExceeded {
                    throw KeychainError.notAvailable("cannot create the embedded store \(path): the disk is full; free some space, then try again")
                } else {
                    throw KeychainError.notAvailable("could not create the embedded store \(path): \(e.text); "
                                                     + "check that its folder belongs to you (mode 0700)")
                }
            }
        }
        let info: FileStatus
        switch FileStatus.of(path, links: .refuse) {
        case .success(let found): info = found
        case .failure(let e):
            if e == .symbolicLink {
                throw KeychainError.notAvailable("\(path) is a symbolic link, and Keygate does not follow links for its own "
                                                 + "files: replace the link with the real file")
            }
            if let unwritable, !readingIsEnough { throw readOnly(unwritable) }
            throw KeychainError.notAvailable("could not open the embedded store \(path): \(e.text); "
                                             + "check that it and its folder belong to you (modes 0600 and 0700)")
        }
        if info.isSymbolicLink {
            throw KeychainError.notAvailable("\(path) is a symbolic link, and Keygate does not follow links for its own "
                                             + "files: replace the link with the real file")
        }
        guard info.isRegular else {
            throw KeychainError.notAvailable("\(path) is not a regular file: move it aside and try again")
        }
        guard info.uid == ProcessIdentity.euid else {
            throw KeychainError.notAvailable("\(path) belongs to uid \(info.uid), not to you (uid \(ProcessIdentity.euid)): "
                                             + "fix its owner, or move it aside")
        }
        if unwritable == nil, !FileSystem.allows(.writable, path), Self.meansReadOnly(SystemErrno.last) {
            unwritable = SystemErrno.last
        }
        if let unwritable {
            guard readingIsEnough else { throw readOnly(unwritable) }
            return false
        }
        if info.mode & 0o077 != 0 { _ = FileSystem.changeMode(path, 0o600) }
        return true
    }

    /// Whether a failed open for writing means the file or its folder cannot be written, so that
    /// a read may still open it read-only: a read-only file system, an immutable file (EPERM),
    /// or no write permission.
    private static func meansReadOnly(_ e: SystemErrno) -> Bool {
        e == .readOnlyFileSystem || e == .notPermitted || e == .accessDenied
    }

    /// The refusal of a write to a store that cannot be written: what, where, and what to do.
    private func readOnly(_ why: SystemErrno) -> KeychainError {
        let cause: String
        if why == .readOnlyFileSystem {
            cause = "the file system is read-only"
        } else if why == .notPermitted {
            cause = "it or the file is immutable (lsattr shows the i flag; chattr -i removes it)"
        } else {
            cause = "it or the file is not writable by you (check their owner, and modes 0700 and 0600)"
        }
        return KeychainError.notAvailable("""
            cannot write the embedded store \(path): the folder \(directory) is read-only: \(cause). Reads still work; to add or \
            change items, make it writable. Pointing XDG_DATA_HOME elsewhere would start an empty keychain there, away from these \
            items
            """)
    }

    /// One step of the schema: moves a file from `from` to `from + 1`, inside the transaction
    /// that records the new version. `isNeeded`: whether a file at `from` holds rows the step
    /// changes; a read takes a file whose pending steps change nothing as it is (reads never write).
    private struct Migration {
        let from: Int64
        let isNeeded: (SQLiteDatabase) throws -> Bool
        let run: (SQLiteDatabase) throws -> Void
    }

    /// The steps, in order. Each step is its own entry: a new one goes at the end, with the next
    /// version number (and `schemaVersion` raised to match).
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
    private func migrateSchema(_ db: SQLiteDatabase, writes: Bool, canWrite: Bool) throws -> Bool {
        var version: Int64 = 0
        if let header = try db.scalarText("PRAGMA user_version").flatMap({ Int64($0) }), header != 0 {
            try refuseNewer(header)
            if header == Self.schemaVersion { return true }
            version = header
        }
        let hasVersion = try db.scalarText("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
        if hasVersion == "1", let text = try db.scalarText("SELECT max(version) FROM schema_version"), let table = Int64(text) {
            try refuseNewer(table)
            version = max(version, table)
            if version == Self.schemaVersion {
                if writes && canWrite { try db.execute("PRAGMA user_version = \(Self.schemaVersion)") }
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
                INSERT INTO schema_version (version) VALUES (\(Self.schemaVersion));
                PRAGMA user_version = \(Self.schemaVersion);
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
