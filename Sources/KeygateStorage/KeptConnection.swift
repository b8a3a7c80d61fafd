// One connection to the embedded store kept open across calls, for a long-running process
// (keygate-secret-service answers every D-Bus call from the file: opening it, setting its
// pragmas and checking its schema for each would cost more than the call itself). Each use
// is its own transaction, so other processes' commits (the CLI's) are seen at the next one, as
// WAL gives every new read transaction the latest commit. The file is opened again when it was
// replaced (another inode: `keygate migrate`, a restore) or removed and made again, as seen
// at the next use more than 100 ms after the last check.
import KeygateCore
import Synchronization

package final class KeptConnection: @unchecked Sendable {
    // @unchecked: the fields below are touched only under `lock`.
    private let lock = Mutex<Void>(())
    private var database: SQLiteDatabase?
    /// Whether `database`'s identity index holds the current keys (EmbeddedStore.open says).
    private var keyed = true
    private var device: UInt64 = 0
    private var inode: UInt64 = 0
    /// When the file's identity was last checked: at most every `checkAge`, not on every use.
    private var checkedAt: ContinuousClock.Instant?
    private static let checkAge: Duration = .milliseconds(100)
    /// Statements prepared once on `database`, by their SQL (the daemon asks the same few
    /// questions over and over: parsing them each time is a third of a call's work).
    private var statements: [StatementKey: SQLiteStatement] = [:]
    /// The statements handed out in the current use, reset when it ends: only those can hold a
    /// read lock, and resetting every kept statement would touch each one's memory on every call.
    private var handedOut: [SQLiteStatement] = []

    package init() {}

    /// Runs `body` on the kept connection, made with `open` when there is none or the file at
    /// `path` is not the one it was made on.
    func withConnection<R>(path: String, open: () throws -> (SQLiteDatabase, Bool),
                           _ body: (SQLiteDatabase, Bool) throws -> R) throws -> R {
        try lock.withLock { _ throws -> R in
            // No statement keeps a read lock between calls.
            defer {
                for statement in handedOut { statement.reset() }
                handedOut.removeAll(keepingCapacity: true)
            }
            let now = ContinuousClock.now
            if let database, let checkedAt, now - checkedAt < Self.checkAge { return try body(database, keyed) }
            if case .success(let info) = FileStatus.of(path, links: .refuse), let database, info.device == device, info.inode == inode {
                checkedAt = now
                return try body(database, keyed)
            }
            statements = [:]
            database = nil
            let (made, madeKeyed) = try open()
            if case .success(let info) = FileStatus.of(path, links: .refuse) {
                device = info.device
                inode = info.inode
                database = made
                keyed = madeKeyed
                checkedAt = now
            }
            return try body(made, madeKeyed)
        }
    }

    /// The statement for `sql` on `database`, prepared on first use. Only inside
    /// `withConnection`'s body (its lock is held there), on the database it passed.
    func statement(_ sql: String, on database: SQLiteDatabase) throws -> SQLiteStatement {
        let key = StatementKey(sql: sql)
        if let known = statements[key] {
            known.reset()
            handedOut.append(known)
            return known
        }
        let made = try database.prepare(sql)
        statements[key] = made
        handedOut.append(made)
        return made
    }
}

/// A kept statement's SQL as a dictionary key hashed by its length alone: hashing the whole
/// text (100-300 bytes) on each of a call's four or so statements cost more than the rest of
/// the lookup in the dictionary. Equality is still the whole text, so two statements of one
/// length only share a bucket, and the text a caller passes again is most often the very same
/// string (a literal, or the one searchSQL keeps), which `==` answers without reading it.
private struct StatementKey: Hashable {
    let sql: String

    static func == (a: StatementKey, b: StatementKey) -> Bool { a.sql == b.sql }

    func hash(into hasher: inout Hasher) { hasher.combine(sql.utf8.count) }
}
