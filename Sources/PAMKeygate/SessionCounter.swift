// Counts each user's live sessions in /run/keygate/<uid>.sessions, a root-only file on
// tmpfs (so a reboot starts at zero), changed under flock(2) so that parallel logins and
// logouts of one user lose nothing. Each session is one line, "PID STARTTIME": the
// process that opened it (sshd's per-connection monitor, login, su: the process that
// later closes it) and that process's start time (/proc/PID/stat field 22), so a reused
// pid is not taken for the old session. Every change first drops the lines whose process
// is gone: a login killed before close_session, or a session whose later module failed,
// no longer keeps the keychain unlocked after the last real logout. The last close locks.
import KeygateCore
import KeygateGateWire

struct SessionCounter {
    static let defaultDirectory = GatekeeperPaths.runRoot
    /// A bound on the file (about 30 bytes per session): more is damage, and starts again.
    static let maxBytes = 64 * 1024

    struct Entry: Equatable {
        let pid: Int32
        let startTime: UInt64
    }

    /// The folder `path` is in (made, and checked, before each change).
    let directory = SessionCounter.defaultDirectory
    let uid: UInt32
    /// CLOCK_MONOTONIC nanoseconds after which the lock is not waited for.
    let deadline: UInt64

    init(uid: UInt32, deadline: UInt64) {
        self.uid = uid
        self.deadline = deadline
    }

    /// GatekeeperPaths.sessionCounterPath: the path `keygate forget-user` removes.
    var path: String { GatekeeperPaths.sessionCounterPath(uid: uid) }

    /// Records the calling process's session; returns the number of live sessions.
    func open() throws -> Int {
        let me = try Self.current()
        return try update { entries in
            if !entries.contains(me) { entries.append(me) }
        }
    }

    /// Removes the calling process's session (or, when it opened none, nothing but the
    /// dead ones); returns the number of live sessions left.
    func close() throws -> Int {
        let me = try Self.current()
        return try update { entries in
            if let index = entries.firstIndex(where: { $0.pid == me.pid }) { entries.remove(at: index) }
        }
    }

    /// The process that called into PAM, as a session entry: the helper's parent, the
    /// process pam_keygate.so runs in (sshd's monitor, login, su).
    static func current() throws -> Entry {
        let pid = ProcessIdentity.ppid
        guard let stat = ProcStat.read(pid: pid) else { throw ModuleError("cannot read /proc/\(pid)/stat: is /proc mounted?") }
        return Entry(pid: pid, startTime: stat.startTime)
    }

    /// True when `entry`'s process still runs (same pid, same start time).
    static func isAlive(_ entry: Entry) -> Bool {
        ProcStat.read(pid: entry.pid)?.startTime == entry.startTime
    }

    static func parse(_ text: String) -> [Entry] {
        text.split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, let start = UInt64(parts[1]) else { return nil }
            return Entry(pid: pid, startTime: start)
        }
    }

    /// Reads the entries under an exclusive lock, drops the dead ones, applies `change`
    /// and writes them back; returns how many are left.
    private func update(_ change: (inout [Entry]) -> Void) throws -> Int {
        try makeDirectory()
        let fd = SafeFile.openLockFile(path)
        guard fd >= 0 else { throw failure("cannot open \(path)") }
        defer { Descriptor.close(fd) }
        try lock(fd)
        guard case .success(let status) = FileStatus.of(descriptor: fd), status.uid == 0, status.isRegular else {
            throw ModuleError("\(path) is not a regular file owned by root: remove it (the count restarts at zero)")
        }
        guard case .success(let bytes) = SafeFile.readOnce(fd, upTo: Self.maxBytes, at: 0) else { throw failure("cannot read \(path)") }
        // Empty or damaged lines are dropped: a count that starts again is better than one stuck.
        var entries = Self.parse(String(decoding: bytes, as: UTF8.self)).filter(Self.isAlive)
        change(&entries)
        let lines = Array(entries.map { "\($0.pid) \($0.startTime)\n" }.joined().utf8)
        guard FileSystem.truncate(descriptor: fd, to: 0) == nil, SafeFile.writeAll(fd, lines, at: 0) == nil else {
            throw failure("cannot write \(path)")
        }
        return entries.count
    }

    /// flock(2), polled until the deadline: a stuck holder never hangs a login.
    private func lock(_ fd: Int32) throws {
        while let e = AdvisoryLock.tryExclusive(fd) {
            guard e == .wouldBlock else { throw failure("cannot lock \(path)") }
            guard FileLock.monotonicNow() < deadline else {
                throw ModuleError("another process held \(path) past this call's time budget: gave up (`fuser -v \(path)` shows who holds it)")
            }
            Pause.sleep(nanoseconds: 10_000_000, resumingAfterSignal: false)
        }
    }

    /// /run/keygate: root's, 0700, not a symbolic link.
    private func makeDirectory() throws {
        if let e = FileSystem.makeFolder(directory, mode: 0o700), e != .exists {
            throw failure("cannot create \(directory)")
        }
        guard case .success(let status) = FileStatus.of(directory, links: .refuse), status.isDirectory, status.uid == 0,
              status.mode & 0o022 == 0 else {
            throw ModuleError("\(directory) must be a folder owned by root and writable only by root: remove it and log in again")
        }
    }

    private func failure(_ what: String) -> ModuleError {
        ModuleError("\(what): \(SystemErrno.last.text)")
    }
}
