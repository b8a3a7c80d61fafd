// The names in an open folder (readdir(3)), without "." and "..", in the order the file
// system gives them. Used where Keygate walks a folder of its own choosing: the keychain
// context's change check (KeychainContext), fprintd's print storage (EnrolledPrints), a policy
// folder (a bounded read: PolicyFileReader) and the folders root removes (ForgetUser).
internal import Glibc

package enum DirectoryNames {
    /// Every entry's name in `dir`, read to its end.
    package static func read(_ dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Every entry's name in the folder `path` (opendir(3), links followed as opendir does).
    package static func list(_ path: String) -> Result<[String], SystemErrno> {
        guard let dir = opendir(path) else { return .failure(.current) }
        defer { closedir(dir) }
        return .success(read(dir))
    }

    /// Opens the folder `path` (opendir(3), links followed as opendir does), reads every name, and
    /// runs `body` with the open folder's descriptor (dirfd(3): for FileStatus.of(_:in:links:)) and
    /// the names; the folder is closed when `body` returns. The errno when opendir fails.
    package static func withNames<T>(in path: String, _ body: (_ folder: Int32, _ names: [String]) throws -> T)
        rethrows -> Result<T, SystemErrno> {
        guard let dir = opendir(path) else { return .failure(.current) }
        defer { closedir(dir) }
        return .success(try body(dirfd(dir), read(dir)))
    }

    /// The names in the open folder `dirfd` (read through a duplicate, so `dirfd` stays open and
    /// its caller's), or nil when the folder holds more than `maxEntries` entries, "." and ".."
    /// counted: a bounded listing of a folder someone else may have filled.
    package static func read(folder dirfd: Int32, maxEntries: Int) -> Result<[String]?, SystemErrno> {
        let copy = dup(dirfd)
        guard copy >= 0 else { return .failure(.current) }
        guard let dir = fdopendir(copy) else {
            let failure = SystemErrno.current
            close(copy)
            return .failure(failure)
        }
        defer { closedir(dir) }
        var names: [String] = []
        var entries = 0
        while let entry = readdir(dir) {
            entries += 1
            if entries > maxEntries { return .success(nil) }
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return .success(names)
    }
}
