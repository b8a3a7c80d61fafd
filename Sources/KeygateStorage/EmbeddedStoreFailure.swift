// The embedded store's errors in words: an SQLite failure (busy past the deadline, read-only,
// full, corrupt, unopenable, I/O, memory) or a write refused because the folder or file cannot
// be written, each saying what happened, where, and what to do. Never an error code alone:
// SQLite's own message follows in parentheses where it helps.
//
// Delegates: the result codes to SQLiteCode.
import KeygateCore

/// The words for what failed at the embedded store at `path` in `directory`.
struct EmbeddedStoreFailure {
    let path: String
    let directory: String
    /// How long a busy file is waited for (the store's deadline).
    let deadline: Duration

    /// The refusal of a write to a store that cannot be written: what, where, and what to do.
    func readOnly(_ why: SystemErrno) -> KeychainError {
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

    /// What failed, where, and what to do, for SQLite's `error` while trying to `action`.
    func sqlite(_ error: SQLiteError, action: String) -> KeychainError {
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
