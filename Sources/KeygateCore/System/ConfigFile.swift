// The one safe reader of configuration: policy files (PolicyFileReader) and keygate.conf
// (StoreConfig). The rule is sudo's and pam-u2f's: a file that sets policy for others counts
// only when root owns it and neither its group nor others can write it; a user's own file may
// also be owned by that user. Owner and mode are checked on the opened descriptor (one fstat),
// never on the path, and a file is read only when it is a regular file within the size limit.
// What the refusal says (with its advice) is the caller's, from the problem returned here.
internal import Glibc

package enum ConfigFile {
    /// Who may own a configuration file or folder.
    package enum Owner: Sendable, Equatable {
        /// root only (the system's files).
        case root
        /// root, or the user whose file it is.
        case rootOr(uid: UInt32)
    }

    /// Why a file or folder must not count.
    package enum Problem: Sendable, Equatable {
        /// Owned by this uid, which the rule does not allow.
        case owner(UInt32)
        /// Writable by its group (`byOthers` false) or by others.
        case writable(byOthers: Bool)
    }

    /// Why a configuration file could not be read.
    package enum ReadFailure: Error, Equatable {
        case notRegular
        case tooLarge
        case failed(SystemErrno)
    }

    /// The rule, applied to what fstat said of the opened file or folder: nil when it may count.
    package static func problem(_ info: FileStatus, owner: Owner) -> Problem? {
        switch owner {
        case .root:
            if info.uid != 0 { return .owner(info.uid) }
        case .rootOr(let uid):
            if info.uid != 0 && info.uid != uid { return .owner(info.uid) }
        }
        let mode = info.mode
        if mode & 0o022 != 0 { return .writable(byOthers: mode & 0o002 != 0) }
        return nil
    }

    /// Opens a configuration file for reading (never blocking on a FIFO), relative to `folder`
    /// when given; `links` `.refuse` for anything the rule applies to.
    package static func open(_ path: String, links: SafeFile.Links, in folder: Int32 = AT_FDCWD) -> Result<OpenFile, SystemErrno> {
        SafeFile.openForReading(path, links: links, in: folder)
    }

    /// The contents of an opened configuration file: a regular file of at most `limit` bytes
    /// (checked on the size fstat gave, and again while reading, in case it grows).
    package static func contents(of file: OpenFile, limit: Int, chunk: Int = 4096) -> Result<[UInt8], ReadFailure> {
        guard file.isRegular else { return .failure(.notRegular) }
        guard file.size <= limit else { return .failure(.tooLarge) }
        switch file.readAll(limit: limit, chunk: chunk) {
        case .success(let bytes): return bytes.count > limit ? .failure(.tooLarge) : .success(bytes)
        case .failure(let why): return .failure(.failed(why))
        }
    }
}
