// The module's own count of a user's live sessions, so that a session's open and close
// start no process when there is nothing to unlock or lock. It is the helper's count
// (Sources/PAMKeygate/SessionCounter.swift) to the byte: /run/keygate/<uid>.sessions, root's,
// on tmpfs, one "PID STARTTIME" line per session (the process that opened it, the PAM
// application, and its start time from /proc/PID/stat field 22, so a reused pid is not the
// old session), changed under flock(2), lines of processes that are gone dropped at every
// change. Any failure answers nil, and the module then starts the helper, which counts and
// logs why itself: the two never disagree about the file, only about who writes it.
internal import CPAMModule

struct SessionFile {
    static let folder: StaticString = "/run/keygate"
    /// As SessionCounter's bound: about 30 bytes a session, more is damage and starts again.
    static let maxBytes = 64 * 1024
    /// How long a change waits for another login's lock (polled, never blocking).
    static let lockBudgetMilliseconds: Int64 = 2_000

    struct Entry: Equatable {
        let pid: Int32
        let startTime: UInt64
    }

    let uid: UInt32

    /// Records this process's session; the number of live sessions, or nil on any failure.
    func open() -> Int? {
        guard let me = Self.current() else { return nil }
        return update { entries in
            if !entries.contains(me) { entries.append(me) }
        }
    }

    /// Removes this process's session (when it opened none: nothing but the dead ones); the
    /// number of live sessions left, or nil on any failure.
    func close() -> Int? {
        let pid = getpid()
        return update { entries in
            var index = 0
            while index < entries.count {
                if entries[index].pid == pid { entries.remove(at: index); return }
                index += 1
            }
        }
    }

    /// The PAM application's process as an entry.
    static func current() -> Entry? {
        let pid = getpid()
        guard let start = startTime(of: pid) else { return nil }
        return Entry(pid: pid, startTime: start)
    }

    private func path() -> [CChar] {
        var text = Bytes()
        text.append(Self.folder)
        text.append("/")
        text.append(number: Int64(uid))
        text.append(".sessions")
        text.bytes.append(0)
        return text.bytes.map { CChar(bitPattern: $0) }
    }

    /// Reads the entries under the lock, keeps the live ones, applies `change`, writes them
    /// back and answers how many are left.
    private func update(_ change: (inout [Entry]) -> Void) -> Int? {
        var folder = Bytes()
        folder.append(Self.folder)
        folder.bytes.append(0)
        let folderReady = folder.bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { keygate_session_folder_ready($0.baseAddress) }
        }
        guard folderReady == 0 else { return nil }
        let fd = path().withUnsafeBufferPointer { keygate_open_session_file($0.baseAddress) }
        guard fd >= 0 else { return nil }
        defer { _ = CPAMModule.close(fd) }
        guard lock(fd), keygate_is_root_regular(fd) != 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: Self.maxBytes)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return pread(fd, base + count, buffer.count - count, off_t(count))
            }
            if n < 0 && keygate_errno() == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            count += n
        }
        var entries: [Entry] = []
        for entry in Self.parse(bytes[0..<count]) where Self.isAlive(entry) { entries.append(entry) }
        change(&entries)
        var text = Bytes()
        for entry in entries {
            text.append(number: Int64(entry.pid))
            text.append(" ")
            text.append(unsigned: entry.startTime)
            text.append("\n")
        }
        guard ftruncate(fd, 0) == 0 else { return nil }
        var written = 0
        while written < text.bytes.count {
            let n = text.bytes.withUnsafeBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return pwrite(fd, base + written, buffer.count - written, off_t(written))
            }
            if n < 0 && keygate_errno() == EINTR { continue }
            if n <= 0 { return nil }
            written += n
        }
        return entries.count
    }

    /// flock(2), polled until the budget: a stuck holder never hangs a login.
    private func lock(_ fd: Int32) -> Bool {
        let deadline = keygate_monotonic_ms() + Self.lockBudgetMilliseconds
        while true {
            let taken = keygate_try_lock(fd)
            if taken == 0 { return true }
            if taken < 0 || keygate_monotonic_ms() >= deadline { return false }
            keygate_sleep_ms(10)
        }
    }

    /// The lines "PID STARTTIME" (a positive pid, decimal digits only, fields apart by
    /// spaces); anything else is dropped, as SessionCounter.parse drops it.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [Entry] {
        var entries: [Entry] = []
        var fields: [UInt64] = []
        var value: UInt64 = 0, digits = 0, valid = true
        for byte in bytes + [0x0A] {
            if byte == 0x20 || byte == 0x0A {
                if digits > 0 || !valid { fields.append(valid ? value : UInt64.max) }
                value = 0; digits = 0; valid = true
                guard byte == 0x0A else { continue }
                if fields.count == 2, fields[0] > 0, fields[0] <= UInt64(Int32.max), fields[1] != UInt64.max {
                    entries.append(Entry(pid: Int32(truncatingIfNeeded: fields[0]), startTime: fields[1]))
                }
                fields.removeAll()
            } else if byte >= 0x30 && byte <= 0x39 && digits < 19 {
                value = value * 10 + UInt64(byte - 0x30)
                digits += 1
            } else {
                valid = false   // a sign, a letter, or more digits than a start time has
            }
        }
        return entries
    }

    /// True when `entry`'s process still runs: the same pid with the same start time.
    static func isAlive(_ entry: Entry) -> Bool {
        startTime(of: entry.pid) == entry.startTime
    }

    /// Field 22 of /proc/PID/stat, counted after the last ')' (the command name may hold both
    /// spaces and parentheses); nil when the process is gone or the line is not understood.
    static func startTime(of pid: Int32) -> UInt64? {
        var path = Bytes()
        path.append("/proc/")
        path.append(number: Int64(pid))
        path.append("/stat")
        path.bytes.append(0)
        let fd = path.bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { keygate_open_for_reading($0.baseAddress) }
        }
        guard fd >= 0 else { return nil }
        defer { _ = CPAMModule.close(fd) }
        var line = [UInt8](repeating: 0, count: 1024)
        var count = 0
        while count < line.count {
            let n = line.withUnsafeMutableBytes { buffer -> Int in
                guard let base = buffer.baseAddress else { return -1 }
                return read(fd, base + count, buffer.count - count)
            }
            if n < 0 && keygate_errno() == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        var close = -1
        for index in 0..<count where line[index] == 0x29 { close = index }
        guard close >= 0 else { return nil }
        var field = 2, value: UInt64 = 0, digits = 0, valid = true
        for byte in line[(close + 1)..<count] + [0x20] {
            if byte == 0x20 || byte == 0x0A {
                if digits > 0 || !valid {
                    field += 1
                    if field == 22 { return valid && digits > 0 ? value : nil }
                }
                value = 0; digits = 0; valid = true
            } else if byte >= 0x30 && byte <= 0x39 && digits < 19 {
                value = value * 10 + UInt64(byte - 0x30)
                digits += 1
            } else {
                valid = false
            }
        }
        return nil
    }
}
