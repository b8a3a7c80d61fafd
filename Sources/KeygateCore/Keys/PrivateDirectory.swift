// Folders that hold key material: created mode 0700 (with any missing parents), and
// checked to be a real folder owned by this user before Keygate writes into it.
internal import Glibc

package enum PrivateDirectory {
    package static func make(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 {
                let e = errno
                if e != EEXIST {
                    throw KeychainError.notAvailable("""
                        could not create the folder \(prefix): \(String(cString: strerror(e))); check its parent's permissions
                        """)
                }
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw KeychainError.notAvailable("could not inspect \(path): \(String(cString: strerror(errno))); check its parent's permissions")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw KeychainError.notAvailable("""
                \(path) is not a folder (or is a symbolic link): Keygate keeps its keys only in a real folder; move it aside and \
                retry
                """)
        }
        guard info.st_uid == geteuid() else {
            throw KeychainError.notAvailable("""
                \(path) belongs to uid \(info.st_uid), not to you (uid \(geteuid())): Keygate keeps its keys only in your own \
                folder; fix its owner
                """)
        }
        if info.st_mode & 0o077 != 0, chmod(path, 0o700) != 0 {
            throw KeychainError.notAvailable("could not make \(path) private (mode 0700): \(String(cString: strerror(errno))); run chmod 700 on it")
        }
    }
}
