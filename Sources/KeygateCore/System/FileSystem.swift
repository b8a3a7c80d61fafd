// Operations on paths that are not reading or writing a file's contents (those are SafeFile's):
// making a folder, removing, renaming, changing mode and owner, access checks, resolving a path
// and reading a link (mkdir(2), unlink(2), rename(2), chmod(2), fchmod(2), chown(2), lchown(2), access(2),
// realpath(3), readlink(2)). Each returns the errno as a SystemErrno (nil when done), and does
// no more than the call it names: no retry, no link followed that the call would not follow.
internal import Glibc

package enum FileSystem {
    /// mkdir(2) with `mode` (the umask applies).
    @discardableResult
    package static func makeFolder(_ path: String, mode: UInt32) -> SystemErrno? {
        mkdir(path, mode) == 0 ? nil : .current
    }

    /// unlink(2): removes a file or a link (never what it points to).
    @discardableResult
    package static func remove(_ path: String) -> SystemErrno? {
        unlink(path) == 0 ? nil : .current
    }

    /// rmdir(2): removes an empty folder.
    @discardableResult
    package static func removeFolder(_ path: String) -> SystemErrno? {
        rmdir(path) == 0 ? nil : .current
    }

    /// rename(2): replaces `destination` atomically.
    @discardableResult
    package static func rename(_ source: String, to destination: String) -> SystemErrno? {
        Glibc.rename(source, destination) == 0 ? nil : .current
    }

    /// chmod(2) (follows a link).
    @discardableResult
    package static func changeMode(_ path: String, _ mode: UInt32) -> SystemErrno? {
        chmod(path, mode) == 0 ? nil : .current
    }

    /// fchmod(2) on an open file.
    @discardableResult
    package static func changeMode(descriptor fd: Int32, _ mode: UInt32) -> SystemErrno? {
        fchmod(fd, mode) == 0 ? nil : .current
    }

    /// ftruncate(2) on an open file.
    @discardableResult
    package static func truncate(descriptor fd: Int32, to length: Int) -> SystemErrno? {
        ftruncate(fd, off_t(length)) == 0 ? nil : .current
    }

    /// chown(2) (follows a link), or lchown(2) with `links` `.refuse` (changes the link itself).
    @discardableResult
    package static func changeOwner(_ path: String, uid: UInt32, gid: UInt32, links: SafeFile.Links = .follow) -> SystemErrno? {
        let rc = links == .refuse ? lchown(path, uid, gid) : chown(path, uid, gid)
        return rc == 0 ? nil : .current
    }

    /// What access(2) is asked about.
    package enum Access: Sendable {
        case exists, readable, writable, executable

        var flag: Int32 {
            switch self {
            case .exists: F_OK
            case .readable: R_OK
            case .writable: W_OK
            case .executable: X_OK
            }
        }
    }

    /// access(2) with the real uid and gid: whether the caller may `access` `path`.
    package static func allows(_ access: Access, _ path: String) -> Bool {
        Glibc.access(path, access.flag) == 0
    }

    /// access(2) for every one of `accesses` at once: nil when the caller has them all, else why not
    /// (ENOENT only when the path was searched to its end and is not there).
    package static func refusal(_ accesses: [Access], _ path: String) -> SystemErrno? {
        Glibc.access(path, accesses.reduce(0) { $0 | $1.flag }) == 0 ? nil : .current
    }

    /// realpath(3): the absolute path with every link resolved; nil when it cannot be resolved.
    package static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// readlink(2): where the link `path` points (at most PATH_MAX bytes); nil when it is no link.
    package static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink(path, &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
