// Folders that hold key material: created mode 0700 (with any missing parents), and
// checked to be a real folder owned by this user before Keygate writes into it.

package enum PrivateDirectory {
    package static func make(_ path: String) throws {
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if let e = FileSystem.makeFolder(prefix, mode: 0o700) {
                if e != .exists {
                    throw KeychainError.notAvailable("""
                        could not create the folder \(prefix): \(e.text); check its parent's permissions
                        """)
                }
            }
        }
        let info: FileStatus
        switch FileStatus.of(path, links: .refuse) {
        case .success(let status): info = status
        case .failure(let e):
            throw KeychainError.notAvailable("could not inspect \(path): \(e.text); check its parent's permissions")
        }
        guard info.isDirectory else {
            throw KeychainError.notAvailable("""
                \(path) is not a folder (or is a symbolic link): Keygate keeps its keys only in a real folder; move it aside and \
                retry
                """)
        }
        guard info.uid == ProcessIdentity.euid else {
            throw KeychainError.notAvailable("""
                \(path) belongs to uid \(info.uid), not to you (uid \(ProcessIdentity.euid)): Keygate keeps its keys only in your own \
                folder; fix its owner
                """)
        }
        if info.mode & 0o077 != 0, let e = FileSystem.changeMode(path, 0o700) {
            throw KeychainError.notAvailable("could not make \(path) private (mode 0700): \(e.text); run chmod 700 on it")
        }
    }
}
