// Counts each user's open sessions in /run/keygate/<uid>.sessions, a root-only file
// on tmpfs (so a reboot starts at zero), changed under flock(2) so that parallel
// logins and logouts of one user do not lose a count. The last close locks.
internal import Glibc

struct SessionCounter {
    static let defaultDirectory = "/run/keygate"
    static let maxBytes = 32

    let directory: String
    let uid: UInt32

    init(uid: UInt32, directory: String = SessionCounter.defaultDirectory) {
        self.uid = uid
        self.directory = directory
    }

    var path: String { "\(directory)/\(uid).sessions" }

    /// Adds one session; returns the new count.
    func open() throws -> UInt32 {
        try update { $0 == UInt32.max ? $0 : $0 + 1 }
    }

    /// Removes one session (never below zero); returns the new count.
    func close() throws -> UInt32 {
        try update { $0 == 0 ? 0 : $0 - 1 }
    }

    /// Reads, changes and writes the count under an exclusive lock.
    private func update(_ change: (UInt32) -> UInt32) throws -> UInt32 {
        try makeDirectory()
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot open \(path)") }
        defer { Glibc.close(fd) }
        guard flock(fd, LOCK_EX) == 0 else { throw failure("cannot lock \(path)") }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_uid == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw ModuleError("\(path) is not a regular file owned by root: remove it (the count restarts at zero)")
        }
        var buffer = [UInt8](repeating: 0, count: Self.maxBytes)
        let read = pread(fd, &buffer, buffer.count, 0)
        guard read >= 0 else { throw failure("cannot read \(path)") }
        let text = String(decoding: buffer.prefix(read), as: UTF8.self)
        let current = UInt32(text.filter { $0 != "\n" }) ?? 0  // empty or damaged: start again at zero
        let next = change(current)
        let bytes = Array("\(next)\n".utf8)
        guard ftruncate(fd, 0) == 0, pwrite(fd, bytes, bytes.count, 0) == bytes.count else {
            throw failure("cannot write \(path)")
        }
        return next
    }

    /// /run/keygate: root's, 0700, not a symbolic link.
    private func makeDirectory() throws {
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw failure("cannot create \(directory)")
        }
        var status = stat()
        guard lstat(directory, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR, status.st_uid == 0,
              status.st_mode & 0o022 == 0 else {
            throw ModuleError("\(directory) must be a folder owned by root and writable only by root: remove it and log in again")
        }
    }

    private func failure(_ what: String) -> ModuleError {
        ModuleError("\(what): \(String(cString: strerror(errno)))")
    }
}
