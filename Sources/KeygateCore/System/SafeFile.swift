// The one way Keygate touches files. Every open adds O_CLOEXEC (no descriptor leaks into
// a child: pinentry, askpass, ssh-keygen); a file opened for reading never blocks on a
// FIFO planted in its place (O_NONBLOCK) and, unless a caller says links are fine, is never
// reached through a symbolic link (O_NOFOLLOW). Reads and writes go to the end (short reads
// and writes continue) and retry on EINTR; an atomic replace writes an unnamed file (O_TMPFILE)
// in the same folder, fsyncs it, names it and renames it over the target and fsyncs the folder. Configuration
// (policy files, keygate.conf) has one reader with one safety rule (ConfigFile).
//
// Errors are errno values: each caller turns them into its own message with advice, so
// the messages people see stay where the context is.
package import Glibc

/// A file opened by SafeFile, with what one fstat said about it. The caller closes it.
package struct OpenFile {
    package let fd: Int32
    package let info: stat

    package var isRegular: Bool { info.st_mode & S_IFMT == S_IFREG }
    package var isDirectory: Bool { info.st_mode & S_IFMT == S_IFDIR }
    /// Permission bits and set-id bits (st_mode & 07777).
    package var mode: mode_t { info.st_mode & 0o7777 }
    package var size: Int { Int(info.st_size) }
    /// The same fstat as a FileStatus.
    package var status: FileStatus { FileStatus(info) }

    package func close() { _ = Glibc.close(fd) }

    /// Everything up to EOF; see SafeFile.readAll.
    package func readAll(limit: Int, chunk: Int = 4096) -> Result<[UInt8], SystemErrno> {
        SafeFile.readAll(fd, limit: limit, chunk: chunk)
    }
}

package enum SafeFile {
    /// Whether a path may be reached through a symbolic link.
    package enum Links: Sendable {
        /// O_NOFOLLOW: a link in the last component fails with ELOOP.
        case refuse
        /// A link is followed (a user's own dotfile may be one).
        case follow
    }

    // MARK: - EINTR

    /// Runs `call` again while it fails (a negative result) with EINTR. The result, and errno
    /// after a failure, are the last call's.
    @inline(__always)
    package static func retryingOnEINTR<T: SignedInteger>(_ call: () -> T) -> T {
        while true {
            let result = call()
            if result < 0, errno == EINTR { continue }
            return result
        }
    }

    // MARK: - Opening

    /// A descriptor on `path` (relative to `folder` when given), or -1 with errno set.
    /// O_CLOEXEC is always added, O_NOFOLLOW when `links` is `.refuse`.
    package static func openDescriptor(_ path: String, _ flags: Int32, mode: mode_t = 0, links: Links = .refuse,
                               in folder: Int32 = AT_FDCWD) -> Int32 {
        let all = flags | O_CLOEXEC | (links == .refuse ? O_NOFOLLOW : 0)
        return retryingOnEINTR { openat(folder, path, all, mode) }
    }

    /// Opens `path` for reading (never blocking on a FIFO) and fstats it. The kind, owner and
    /// mode are the caller's to check, on `info`, so that a swapped file cannot slip in between.
    package static func openForReading(_ path: String, links: Links = .refuse, in folder: Int32 = AT_FDCWD)
        -> Result<OpenFile, SystemErrno> {
        let fd = openDescriptor(path, O_RDONLY | O_NONBLOCK, links: links, in: folder)
        guard fd >= 0 else { return .failure(.current) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let failure = SystemErrno.current
            _ = close(fd)
            return .failure(failure)
        }
        return .success(OpenFile(fd: fd, info: info))
    }

    /// Opens the folder `path` (O_DIRECTORY) to work relative to it, or -1 with errno set.
    package static func openFolder(_ path: String, links: Links = .refuse) -> Int32 {
        openDescriptor(path, O_RDONLY | O_DIRECTORY, links: links)
    }

    /// Opens (creating it, mode `mode`, if missing) a lock file: read-write, never through a link.
    package static func openLockFile(_ path: String, mode: mode_t = 0o600) -> Int32 {
        openDescriptor(path, O_RDWR | O_CREAT, mode: mode)
    }

    // MARK: - Reading and writing

    /// Reads from `fd` until EOF, in reads of `chunk` bytes. Stops as soon as it has more than
    /// `limit` bytes: a result longer than `limit` means the file is too large.
    package static func readAll(_ fd: Int32, limit: Int, chunk: Int = 4096) -> Result<[UInt8], SystemErrno> {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while out.count <= limit {
            let n = retryingOnEINTR { buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) } }
            if n < 0 { return .failure(.current) }
            if n == 0 { break }
            out += buffer[0..<n]
        }
        return .success(out)
    }

    /// One read(2) of at most `count` bytes (pread(2) at `offset` when given), EINTR retried:
    /// what it gave, empty at EOF.
    package static func readOnce(_ fd: Int32, upTo count: Int, at offset: off_t? = nil) -> Result<[UInt8], SystemErrno> {
        var buffer = [UInt8](repeating: 0, count: count)
        let n = retryingOnEINTR {
            buffer.withUnsafeMutableBytes { raw in
                if let offset { return pread(fd, raw.baseAddress, raw.count, offset) }
                return Glibc.read(fd, raw.baseAddress, raw.count)
            }
        }
        if n < 0 { return .failure(.current) }
        return .success(Array(buffer.prefix(n)))
    }

    /// Reads from `fd` into `buffer` until it is full or EOF: the count read. With `terminator`,
    /// a read that ends with that byte ends it too (a /proc line comes whole in one read(2),
    /// so no second read is made to learn of the end).
    package static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer,
                                  endingAt terminator: UInt8? = nil) -> Result<Int, SystemErrno> {
        guard let base = buffer.baseAddress else { return .success(0) }
        var filled = 0
        while filled < buffer.count {
            let n = retryingOnEINTR { Glibc.read(fd, base + filled, buffer.count - filled) }
            if n < 0 { return .failure(.current) }
            if n == 0 { break }
            filled += n
            if let terminator, buffer[filled - 1] == terminator { break }
        }
        return .success(filled)
    }

    /// Writes all of `bytes` to `fd` (at `offset` with pwrite when given). nil when done; the
    /// errno otherwise (EIO when the descriptor takes no more bytes).
    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: off_t? = nil) -> SystemErrno? {
        guard let base = bytes.baseAddress else { return nil }
        var done = 0
        while done < bytes.count {
            let n = retryingOnEINTR {
                if let offset { return pwrite(fd, base + done, bytes.count - done, offset + off_t(done)) }
                return Glibc.write(fd, base + done, bytes.count - done)
            }
            if n < 0 { return .current }
            if n == 0 { return SystemErrno(code: EIO) }
            done += n
        }
        return nil
    }

    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: off_t? = nil) -> SystemErrno? {
        bytes.withUnsafeBytes { writeAll(fd, $0, at: offset) }
    }

    // MARK: - Atomic replace

    /// Why an atomic replace failed: the errno, the path it concerns and what was being done
    /// ("open folder", "create", "set permissions of", "write", "flush", "close", "replace",
    /// "flush folder").
    package struct ReplaceFailure: Error {
        package let code: Int32
        package let path: String
        package let action: String
    }

    /// Puts `bytes` at `path` whole or not at all: a file (mode `mode`, whatever the umask) made
    /// in the same folder, written and fsynced, then renamed over `path` (or, with `exclusive`,
    /// linked to it, so an existing file fails with EEXIST even when another process creates it at
    /// the same moment), then the folder fsynced. `durable` false skips both fsyncs (a cache that
    /// may be lost). The file is made unnamed (O_TMPFILE) where the file system allows, and named
    /// only once written: a writer stopped halfway (killed, out of space, over its file-size
    /// limit) leaves nothing in the folder. Elsewhere it is a named temporary file, removed on
    /// failure. `path` then holds the old contents, or the new.
    package static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, exclusive: Bool = false,
                        durable: Bool = true) throws(ReplaceFailure) {
        let (folder, name) = split(path)
        let dirfd = openFolder(folder)
        guard dirfd >= 0 else { throw ReplaceFailure(code: errno, path: folder, action: "open folder") }
        defer { close(dirfd) }
        let temporary = ".\(name).\(Sodium.randomBytes(6).map { hexDigits($0) }.joined()).tmp"
        let unnamed = UnnamedFile.open(in: dirfd, mode: mode)
        if unnamed >= 0 {
            let linked: Bool
            do throws(ReplaceFailure) {
                linked = try fill(unnamed, with: bytes, mode: mode, path: path, durable: durable) { () throws(ReplaceFailure) in
                    if UnnamedFile.link(unnamed, in: dirfd, as: exclusive ? name : temporary) { return true }
                    if errno == EEXIST { throw ReplaceFailure(code: EEXIST, path: path, action: "create") }
                    return false
                }
            } catch {
                close(unnamed)
                throw error
            }
            close(unnamed)
            if linked {
                if !exclusive, renameat(dirfd, temporary, dirfd, name) != 0 {
                    let code = errno
                    _ = unlinkat(dirfd, temporary, 0)
                    throw ReplaceFailure(code: code, path: path, action: "replace")
                }
                if durable, fsync(dirfd) != 0 { throw ReplaceFailure(code: errno, path: folder, action: "flush folder") }
                return
            }
            // No way to name an unnamed file here (no /proc, not root): a named temporary file instead.
        }
        let fd = openDescriptor(temporary, O_WRONLY | O_CREAT | O_EXCL, mode: mode, in: dirfd)
        guard fd >= 0 else { throw ReplaceFailure(code: errno, path: folder + "/" + temporary, action: "create") }
        do throws(ReplaceFailure) {
            _ = try fill(fd, with: bytes, mode: mode, path: path, durable: durable) { true }
            guard close(fd) == 0 else { throw ReplaceFailure(code: errno, path: path, action: "close") }
            if exclusive {
                guard linkat(dirfd, temporary, dirfd, name, 0) == 0 else { throw ReplaceFailure(code: errno, path: path, action: "create") }
                _ = unlinkat(dirfd, temporary, 0)
            } else {
                guard renameat(dirfd, temporary, dirfd, name) == 0 else { throw ReplaceFailure(code: errno, path: path, action: "replace") }
            }
        } catch {
            _ = unlinkat(dirfd, temporary, 0)
            throw error
        }
        if durable, fsync(dirfd) != 0 { throw ReplaceFailure(code: errno, path: folder, action: "flush folder") }
    }

    /// Sets the mode of the open file `fd`, writes `bytes` and fsyncs it, then runs `then`. The
    /// descriptor stays open (a failed close would otherwise hide a write error: the caller closes).
    private static func fill(_ fd: Int32, with bytes: [UInt8], mode: mode_t, path: String, durable: Bool,
                             then: () throws(ReplaceFailure) -> Bool) throws(ReplaceFailure) -> Bool {
        // The umask must not widen or narrow the mode.
        guard fchmod(fd, mode) == 0 else { throw ReplaceFailure(code: errno, path: path, action: "set permissions of") }
        if let failure = writeAll(fd, bytes) { throw ReplaceFailure(code: failure.code, path: path, action: "write") }
        if durable, fsync(fd) != 0 { throw ReplaceFailure(code: errno, path: path, action: "flush") }
        return try then()
    }

    /// The folder and the last component of `path` ("." for a bare name, "/" at the root).
    package static func split(_ path: String) -> (folder: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let folder = String(path[..<slash])
        return (folder.isEmpty ? "/" : folder, String(path[path.index(after: slash)...]))
    }

    private static func hexDigits(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
