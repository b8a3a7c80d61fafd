// Small files that must never be half-written or read through a link: protectors and
// other key material on disk. A write goes to a temporary file in the same folder,
// is fsynced, renamed over the target and the folder is fsynced (all relative to one
// folder descriptor: SafeFile.replace). A read refuses symbolic links, non-regular files
// and oversize files. This file gives those failures Keygate's messages.

package enum AtomicFile {
    /// Writes `bytes` to `path`, replacing any existing file atomically.
    package static func write(_ bytes: [UInt8], to path: String, mode: UInt32) throws {
        try store(bytes, to: path, mode: mode, replace: true)
    }

    /// As `write`, but fails with .duplicateItem when `path` already exists, even when
    /// another process creates it at the same moment (link(2) never replaces).
    package static func create(_ bytes: [UInt8], at path: String, mode: UInt32) throws {
        try store(bytes, to: path, mode: mode, replace: false)
    }

    /// The file's bytes, or nil if it does not exist.
    package static func read(_ path: String, maxBytes: Int) throws -> [UInt8]? {
        let file: OpenFile
        switch SafeFile.openForReading(path) {
        case .success(let opened): file = opened
        case .failure(.noEntry): return nil
        case .failure(let e): throw failure(e.code, path, "open")
        }
        defer { file.close() }
        guard file.isRegular else {
            throw KeychainError.notAvailable("\(path) is not a regular file: remove it, or restore Keygate's file from a backup")
        }
        guard file.size <= maxBytes else { throw tooLarge(path, maxBytes) }
        switch file.readAll(limit: maxBytes) {
        case .success(let bytes):
            guard bytes.count <= maxBytes else { throw tooLarge(path, maxBytes) }
            return bytes
        case .failure(let e): throw failure(e.code, path, "read")
        }
    }

    /// Removes `path` if present (used to undo a half-finished multi-file operation).
    package static func remove(_ path: String) throws {
        if let e = FileSystem.remove(path), e != .noEntry { throw failure(e.code, path, "remove") }
    }

    package static func exists(_ path: String) -> Bool {
        if case .success = FileStatus.of(path, links: .refuse) { return true }
        return false
    }

    // MARK: - Implementation

    private static func store(_ bytes: [UInt8], to path: String, mode: UInt32, replace: Bool) throws {
        do throws(SafeFile.ReplaceFailure) {
            try SafeFile.replace(path, with: bytes, mode: mode, exclusive: !replace)
        } catch {
            if !replace, error.action == "create", error.code == SystemErrno.exists.code, error.path == path {
                throw KeychainError.duplicateItem("\(path) already exists: another keygate may have just created it; check with `keygate status`")
            }
            throw failure(error.code, error.path, error.action)
        }
    }

    private static func tooLarge(_ path: String, _ maxBytes: Int) -> KeychainError {
        .decode("\(path) is larger than \(maxBytes) bytes, too large to be Keygate's file: it is corrupt or was replaced; restore it from a backup")
    }

    private static func failure(_ code: Int32, _ path: String, _ action: String) -> KeychainError {
        if code == SystemErrno.symbolicLink.code {
            return .notAvailable("""
                \(path) is a symbolic link, and Keygate does not follow links for its own files: replace the link with the real \
                file or folder
                """)
        }
        let reason = SystemErrno(code: code).text
        if code == SystemErrno.fileTooLarge.code {
            return .notAvailable("could not \(action) \(path): \(reason); the process's file-size limit is too small: raise it (ulimit -f)")
        }
        if code == SystemErrno.accessDenied.code || code == SystemErrno.notPermitted.code {
            return .notAvailable("could not \(action) \(path): \(reason); check that it belongs to you and that its folder is mode 0700")
        }
        return .notAvailable("could not \(action) \(path): \(reason); check the disk and the folder's permissions")
    }
}
