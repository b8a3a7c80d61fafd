// A small wrapper over SQLite's C API for the embedded store: one connection
// (SQLiteDatabase owns the sqlite3 handle and closes it in deinit), prepared
// statements (SQLiteStatement owns the sqlite3_stmt) with blob and text binding that
// is binary-safe (embedded NULs, empty blobs), a busy timeout, and transactions.
// Errors come out as SQLiteError (the result code and SQLite's message); the
// embedded store turns them into KeychainError with advice. The C names appear
// only here. libsqlite3 is loaded on the first open (Sources/CSQLite/shim.h).
import KeygateCore
internal import CSQLite

/// A failed SQLite call: its extended result code and SQLite's own message.
struct SQLiteError: Error, Sendable {
    let code: Int32
    let message: String

    /// The primary result code (SQLITE_BUSY, SQLITE_FULL...).
    var primary: Int32 { code & 0xff }
    var isBusy: Bool { primary == SQLITE_BUSY || primary == SQLITE_LOCKED }
    var isConstraintUnique: Bool {
        code == SQLITE_CONSTRAINT_UNIQUE || code == SQLITE_CONSTRAINT_PRIMARYKEY
    }
}

/// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.
private let transient = unsafeBitCast(Int(-1), to: sqlite3_destructor_type.self)

final class SQLiteDatabase {
    private let handle: OpaquePointer
    /// BEGIN and COMMIT, prepared on first use and kept with the connection: a connection kept
    /// open (keygate-secret-service's) runs two transactions per client call, and sqlite3_exec
    /// would parse and compile each statement again every time.
    private var beginRead: OpaquePointer?
    private var beginWrite: OpaquePointer?
    private var commit: OpaquePointer?

    /// Opens (and creates when `create`) the database at `path`, read-write, never
    /// through a symbolic link. The C function is `sqlite3_open_v2(3)`.
    init(path: String, create: Bool) throws {
        handle = try Self.open(path, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
    }

    /// Opens the database at `path` read-only, for a read on a read-only file system
    /// (docs/DECISIONS.md, "A read-only data folder"): SQLite reads a WAL database read-only when its -wal and -shm files are there, as
    /// Keygate keeps them; else, with `immutable`, as a file nothing changes (no locks, no WAL).
    init(readingOnly path: String, immutable: Bool) throws {
        var escaped = ""
        for byte in path.utf8 {
            let plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2F || byte == 0x2D || byte == 0x2E || byte == 0x5F
            escaped += plain ? String(UnicodeScalar(byte)) : "%" + (byte < 16 ? "0" : "") + String(Int(byte), radix: 16)
        }
        handle = try Self.open("file:" + escaped + (immutable ? "?immutable=1" : ""), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI)
    }

    /// `sqlite3_open_v2` with `mode` and never through a link, one connection's own cache, no mutex.
    private static func open(_ filename: String, _ mode: Int32) throws -> OpaquePointer {
        if let why = kg_sqlite_load_error() {
            throw KeychainError.notAvailable(String(cString: why) + ": the embedded store needs SQLite; install it "
                                             + "(Debian: `sudo apt-get install libsqlite3-0`)")
        }
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(filename, &db, mode | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE, nil)
        guard let db else { throw SQLiteError(code: rc, message: "out of memory") }
        guard rc == SQLITE_OK else {
            let error = SQLiteError(code: sqlite3_extended_errcode(db), message: String(cString: sqlite3_errmsg(db)))
            sqlite3_close_v2(db)
            throw error
        }
        sqlite3_extended_result_codes(db, 1)
        return db
    }

    deinit {
        for statement in [beginRead, beginWrite, commit] { if let statement { sqlite3_finalize(statement) } }
        sqlite3_close_v2(handle)
    }

    /// How long a statement waits for another connection's lock before SQLITE_BUSY.
    func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    /// Keeps the -wal and -shm files when the last connection closes (SQLITE_FCNTL_PERSIST_WAL)
    /// instead of deleting them, so the next connection does not create, size and map them
    /// again: every one-command process is a first and last connection.
    func keepWriteAheadLogFiles() {
        var on: Int32 = 1
        _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
    }

    /// Runs one or more statements with no parameters and no rows wanted.
    func execute(_ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(message)
            throw SQLiteError(code: sqlite3_extended_errcode(handle), message: text)
        }
    }

    /// Runs `sql` (a statement with no parameters and no rows) from `kept`, prepared there on first use.
    private func run(_ kept: inout OpaquePointer?, _ sql: String) throws {
        if kept == nil {
            var made: OpaquePointer?
            let rc = sqlite3_prepare_v2(handle, sql, -1, &made, nil)
            guard rc == SQLITE_OK, let made else { throw lastError(rc) }
            kept = made
        }
        guard let statement = kept else { return }
        let rc = sqlite3_step(statement)
        let failure = rc == SQLITE_DONE || rc == SQLITE_ROW ? nil : lastError(rc)
        sqlite3_reset(statement)
        if let failure { throw failure }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw lastError(rc) }
        return SQLiteStatement(statement, database: self)
    }

    /// The first column of the first row of a query, as text (pragmas, counts).
    func scalarText(_ sql: String) throws -> String? {
        let statement = try prepare(sql)
        guard try statement.step() else { return nil }
        return statement.text(0)
    }

    /// Runs `body` inside BEGIN IMMEDIATE ... COMMIT (the write lock is taken at once, so
    /// two writers never deadlock on a lock upgrade); any error rolls back.
    func writeTransaction<R>(_ body: () throws -> R) throws -> R {
        try run(&beginWrite, "BEGIN IMMEDIATE")
        do {
            let result = try body()
            try run(&commit, "COMMIT")
            return result
        } catch {
            if sqlite3_get_autocommit(handle) == 0 { _ = try? execute("ROLLBACK") }
            throw error
        }
    }

    /// Runs `body` inside one read transaction (a consistent snapshot).
    func readTransaction<R>(_ body: () throws -> R) throws -> R {
        try run(&beginRead, "BEGIN DEFERRED")
        defer { if sqlite3_get_autocommit(handle) == 0 { _ = try? run(&commit, "COMMIT") } }
        return try body()
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    var changes: Int { Int(sqlite3_changes(handle)) }

    fileprivate func lastError(_ rc: Int32) -> SQLiteError {
        let code = sqlite3_extended_errcode(handle)
        return SQLiteError(code: code == SQLITE_OK ? rc : code, message: String(cString: sqlite3_errmsg(handle)))
    }
}

/// One prepared statement. Parameters are 1-based, columns 0-based, as in SQLite.
final class SQLiteStatement {
    private let statement: OpaquePointer
    private let database: SQLiteDatabase

    fileprivate init(_ statement: OpaquePointer, database: SQLiteDatabase) {
        self.statement = statement
        self.database = database
    }

    deinit { sqlite3_finalize(statement) }

    /// Binds bytes as a BLOB; an empty array stays a zero-length blob, never NULL.
    func bind(_ index: Int32, blob: [UInt8]) throws {
        let rc = blob.isEmpty ? sqlite3_bind_zeroblob(statement, index, 0)
            : blob.withUnsafeBytes { sqlite3_bind_blob(statement, index, $0.baseAddress, Int32($0.count), transient) }
        try check(rc)
    }

    /// Binds a string as TEXT by its UTF-8 bytes (so an embedded NUL survives).
    func bind(_ index: Int32, text: String) throws {
        // A trailing NUL keeps the buffer non-empty, so "" binds as empty TEXT, never NULL.
        let bytes = Array(text.utf8) + [0]
        let rc = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                sqlite3_bind_text(statement, index, chars.baseAddress, Int32(chars.count - 1), transient)
            }
        }
        try check(rc)
    }

    func bind(_ index: Int32, int: Int64) throws {
        try check(sqlite3_bind_int64(statement, index, int))
    }

    /// Advances to the next row: true when a row is ready, false when done.
    func step() throws -> Bool {
        let rc = sqlite3_step(statement)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        throw database.lastError(rc)
    }

    /// Steps until done (for INSERT, UPDATE, DELETE).
    func run() throws {
        while try step() {}
    }

    /// Makes the statement ready to run again with new bindings.
    func reset() {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let base = sqlite3_column_blob(statement, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    func text(_ column: Int32) -> String {
        guard let base = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: base, count: count), as: UTF8.self)
    }

    func int(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    private func check(_ rc: Int32) throws {
        if rc != SQLITE_OK { throw database.lastError(rc) }
    }
}

/// The result codes the embedded store distinguishes, so it need not import CSQLite for them.
enum SQLiteCode {
    static let busy = SQLITE_BUSY
    static let locked = SQLITE_LOCKED
    static let readOnly = SQLITE_READONLY
    static let full = SQLITE_FULL
    static let corrupt = SQLITE_CORRUPT
    static let notADatabase = SQLITE_NOTADB
    static let cannotOpen = SQLITE_CANTOPEN
    static let ioError = SQLITE_IOERR
    static let permission = SQLITE_PERM
    static let auth = SQLITE_AUTH
    static let noMemory = SQLITE_NOMEM
}
