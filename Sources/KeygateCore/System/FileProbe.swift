// Small read-only looks at the file system for the diagnostics: does a path exist,
// its owner, mode and type (lstat, never following a link), and a small text
// file's contents. Only Glibc calls; nothing here writes.
internal import Glibc

package struct FileProbe {
    package enum Kind: Equatable { case regular, directory, symlink, socket, other }

    package struct Info: Equatable {
        package var kind: Kind
        package var uid: UInt32
        /// Permission bits only (0o7777).
        package var mode: UInt32
    }

    package enum Outcome: Equatable {
        case found(Info)
        case absent
        /// Permission denied on the path (e.g. a non-root user looking into /var/lib/keygate).
        case denied
        case error(String)
    }

    package static func inspect(_ path: String) -> Outcome {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            let e = errno
            switch e {
            case ENOENT, ENOTDIR: return .absent
            case EACCES, EPERM: return .denied
            default: return .error(String(cString: strerror(e)))
            }
        }
        let kind: Kind
        switch st.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        case S_IFSOCK: kind = .socket
        default: kind = .other
        }
        return .found(Info(kind: kind, uid: st.st_uid, mode: st.st_mode & 0o7777))
    }

    package static func exists(_ path: String) -> Bool {
        if case .found = inspect(path) { return true }
        return false
    }

    /// The file's text, at most `limit` bytes; nil when it cannot be read.
    package static func readText(_ path: String, limit: Int = 256 * 1024) -> String? {
        let fd = SafeFile.openDescriptor(path, O_RDONLY | O_NONBLOCK, links: .follow)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard case .success(let bytes) = SafeFile.readAll(fd, limit: limit) else { return nil }
        return String(decoding: bytes.prefix(limit), as: UTF8.self)
    }

    /// The paths matching a glob pattern (no error when nothing matches).
    package static func glob(_ pattern: String) -> [String] {
        var g = glob_t()
        defer { globfree(&g) }
        guard Glibc.glob(pattern, 0, nil, &g) == 0 else { return [] }
        var out: [String] = []
        for i in 0..<Int(g.gl_pathc) {
            if let p = g.gl_pathv[i] { out.append(String(cString: p)) }
        }
        return out
    }

    package static var uid: UInt32 { ProcessIdentity.uid }
}
