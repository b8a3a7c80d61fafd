// The ItemStore for hosts with no Secret Service: a SQLite database at
// <data dir>/items.sqlite (mode 0600 in the 0700 data folder) holding only what the
// Secret Service would hold: each item's attributes (ItemAttributeCodec's strings, the
// same as the Secret Service's) and its sealed blob. Never plaintext.
//
// Crash safety: WAL journal, synchronous=FULL, and every write is one BEGIN IMMEDIATE
// transaction, so a process killed at any instant leaves each item old or new.
// Duplicates are refused by the database itself (a UNIQUE index on the identity's
// primary key bytes, ItemIdentity.storeKey). The schema moves forward one numbered step at a
// time (EmbeddedSchema). A folder or file that cannot be written (a read-only mount, `chattr +i`)
// is read as it is, and a write there says so. Other processes: a busy timeout plus bounded
// retries, both within the store's deadline. SQLite calls go through SQLiteDatabase; errors are
// worded by EmbeddedStoreFailure.
import KeygateCore

package final class EmbeddedStore: ItemStore {
    static let fileName = "items.sqlite"
    /// The identity column is ItemIdentity.storeKey: 1 keyed the name alone; 2 added a
    /// synchronizable item's flag; 3 an item's access group. An older file is moved forward by
    /// the first connection that may write it (EmbeddedSchema).
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
                throw failures.sqlite(error, action: action)
            }
        }
    }

    /// Every connection keeps the -wal and -shm files at close: creating, sizing and unlinking
    /// them again in each one-command process is most of an embedded read's system time
    /// (docs/DECISIONS.md, "A read pays for its own work only"). A connection that writes sets what writes need: foreign keys (a delete
    /// cascades to the item's attributes), full syncs, WAL mode (persistent in the file, so set
    /// once), and a WAL cut back to empty by the checkpoint at close, so that old page images do
    /// not stay in it. A read needs none of them. Both check the schema version. Also returns
    /// whether the identity index holds the current keys (EmbeddedSchema.migrate).
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
        let keyed = try EmbeddedSchema(path: path).migrate(db, writes: writes, canWrite: writable)
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
            if let unwritable, !readingIsEnough { throw failures.readOnly(unwritable) }
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
            guard readingIsEnough else { throw failures.readOnly(unwritable) }
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

    /// What a failure at this store says (EmbeddedStoreFailure).
    var failures: EmbeddedStoreFailure { EmbeddedStoreFailure(path: path, directory: directory, deadline: deadline) }
}
