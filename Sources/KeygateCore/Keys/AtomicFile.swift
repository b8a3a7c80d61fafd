// Small files that must never be half-written or read through a link: protectors and
// other key material on disk. A write goes to a temporary file in the same folder,
// is fsynced, renamed over the target and the folder is fsynced (all relative to one
// folder descriptor). A read refuses symbolic links, non-regular files and oversize files.
package import Glibc

package enum AtomicFile {
    /// Writes `bytes` to `path`, replacing any existing file atomically.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t) throws {
        try store(bytes, to: path, mode: mode, replace: true)
    }

    /// As `write`, but fails with .duplicateItem when `path` already exists, even when
    /// another process creates it at the same moment (link(2) never replaces).
    package static func create(_ bytes: [UInt8], at path: String, mode: mode_t) throws {
        try store(bytes, to: path, mode: mode, replace: false)
    }

    /// The file's bytes, or nil if it does not exist.
    package static func read(_ path: String, maxBytes: Int) throws -> [UInt8]? {
        // O_NONBLOCK: a FIFO planted at `path` must not hang the caller.
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            let e = errno
            if e == ENOENT { return nil }
            throw failure(e, path, "open")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure(errno, path, "inspect") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw KeychainError.notAvailable("\(path) is not a regular file: remove it, or restore Keygate's file from a backup")
        }
        guard info.st_size <= maxBytes else { throw tooLarge(path, maxBytes) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure(errno, path, "read")
            }
            if n == 0 { break }
            out += chunk[0..<n]
            guard out.count <= maxBytes else { throw tooLarge(path, maxBytes) }
        }
        return out
    }

    /// Removes `path` if present (used to undo a half-finished multi-file operation).
    static func remove(_ path: String) throws {
        if unlink(path) != 0, errno != ENOENT { throw failure(errno, path, "remove") }
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    // MARK: - Implementation

    private static func store(_ bytes: [UInt8], to path: String, mode: mode_t, replace: Bool) throws {
        let (folder, name) = split(path)
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard dirfd >= 0 else { throw failure(errno, folder, "open folder") }
        defer { close(dirfd) }

        let temporary = ".\(name).\(Sodium.randomBytes(6).map { hexDigits($0) }.joined()).tmp"
        let fd = openat(dirfd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode)
        guard fd >= 0 else { throw failure(errno, folder + "/" + temporary, "create") }
        var fdOpen = true
        do {
            guard fchmod(fd, mode) == 0 else { throw failure(errno, path, "set permissions of") }  // umask must not widen or narrow it
            try writeAll(fd, bytes, path)
            guard fsync(fd) == 0 else { throw failure(errno, path, "flush") }
            fdOpen = false
            guard close(fd) == 0 else { throw failure(errno, path, "close") }
            if replace {
                guard renameat(dirfd, temporary, dirfd, name) == 0 else { throw failure(errno, path, "replace") }
            } else {
                guard linkat(dirfd, temporary, dirfd, name, 0) == 0 else {
                    let e = errno
                    if e == EEXIST {
                        throw KeychainError.duplicateItem("\(path) already exists: another keygate may have just created it; check with `keygate status`")
                    }
                    throw failure(e, path, "create")
                }
                _ = unlinkat(dirfd, temporary, 0)
            }
        } catch {
            if fdOpen { close(fd) }
            _ = unlinkat(dirfd, temporary, 0)
            throw error
        }
        guard fsync(dirfd) == 0 else { throw failure(errno, folder, "flush folder") }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress.map { $0 + offset }, $0.count - offset) }
            if n < 0 {
                if errno == EINTR { continue }
                throw failure(errno, path, "write")
            }
            offset += n
        }
    }

    private static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    private static func tooLarge(_ path: String, _ maxBytes: Int) -> KeychainError {
        .decode("\(path) is larger than \(maxBytes) bytes, too large to be Keygate's file: it is corrupt or was replaced; restore it from a backup")
    }

    private static func failure(_ code: Int32, _ path: String, _ action: String) -> KeychainError {
        if code == ELOOP {
            return .notAvailable("\(path) is a symbolic link, and Keygate does not follow links for its own files: replace the link with the real file or folder")
        }
        let reason = String(cString: strerror(code))
        if code == EACCES || code == EPERM {
            return .notAvailable("could not \(action) \(path): \(reason); check that it belongs to you and that its folder is mode 0700")
        }
        return .notAvailable("could not \(action) \(path): \(reason); check the disk and the folder's permissions")
    }
}
