// One owned file descriptor, closed exactly once (at `close()` or when the owner lets go of
// it), and what Keygate does with descriptors it did not open as files: close-on-exec pipes
// (pipe2, so another thread's spawn never inherits an end), writing all of a buffer,
// reading an exact count before a deadline (the gatekeeper's frames), and fsync. Every read
// and write retries EINTR; partial reads of secrets are wiped. Files are SafeFile's; processes are Spawn's.
internal import CSystem
internal import Glibc

package final class Descriptor {
    package private(set) var raw: Int32

    package init(adopting raw: Int32) { self.raw = raw }

    deinit { close() }

    package func close() {
        if raw >= 0 { _ = Glibc.close(raw) }
        raw = -1
    }

    /// close(2) on a descriptor no Descriptor owns; nil when closed, else why not (the
    /// descriptor is gone either way: close is never retried).
    @discardableResult
    package static func close(_ fd: Int32) -> SystemErrno? {
        Glibc.close(fd) == 0 ? nil : .current
    }

    /// fsync(2) on a descriptor no Descriptor owns: its data and metadata on the disk; nil when
    /// done, else why not. Not retried on EINTR: it does what fsync(2) does, no more.
    @discardableResult
    package static func sync(_ fd: Int32) -> SystemErrno? {
        fsync(fd) == 0 ? nil : .current
    }

    /// F_SETPIPE_SZ (fcntl(2)): asks for a pipe of at least `bytes` (the kernel rounds up, and
    /// refuses above /proc/sys/fs/pipe-max-size for an unprivileged caller).
    @discardableResult
    package func setPipeCapacity(_ bytes: Int32) -> SystemErrno? {
        fcntl(raw, 1031 /* F_SETPIPE_SZ */, bytes) >= 0 ? nil : .current
    }

    /// Hands the descriptor to the caller, who closes it; this owner no longer will.
    package func release() -> Int32 {
        defer { raw = -1 }
        return raw
    }

    /// A close-on-exec copy of `fd` numbered at least `lowest` (F_DUPFD_CLOEXEC), or -1: what a
    /// spawn then moves onto a low number without landing on another descriptor it moves.
    package static func duplicate(_ fd: Int32, lowest: Int32) -> Int32 {
        fcntl(fd, F_DUPFD_CLOEXEC, lowest)
    }

    /// A pipe whose ends are close-on-exec from the start and numbered at least `lowest`
    /// (an end below it is moved up), so that a child's dup2 onto 0, 1, 2 or the numbers a
    /// caller asked for never lands on the other end.
    package static func pipe(lowest: Int32 = 3) -> Result<(read: Descriptor, write: Descriptor), SystemErrno> {
        var fds: [Int32] = [-1, -1]
        guard keygate_pipe_cloexec(&fds) == 0 else { return .failure(.current) }
        let read = Descriptor(adopting: fds[0]), write = Descriptor(adopting: fds[1])
        for end in [read, write] where end.raw < lowest {
            let moved = fcntl(end.raw, F_DUPFD_CLOEXEC, lowest)
            guard moved >= 0 else { return .failure(.current) }
            end.close()
            end.raw = moved
        }
        return .success((read, write))
    }

    /// One read(2) of at most `count` bytes into `base`, EINTR retried: the count read, 0 at
    /// end of input, -1 with errno set.
    package static func read(_ fd: Int32, into base: UnsafeMutableRawPointer?, count: Int) -> Int {
        SafeFile.retryingOnEINTR { Glibc.read(fd, base, count) }
    }

    /// Waits until `fd` has data (or its other end closed) for at most `milliseconds`, counted on
    /// the boot clock across EINTR; false at the deadline. An error other than EINTR answers
    /// true, so the read that follows reports it.
    package static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        var left = milliseconds
        while true {
            let started = BootClock.seconds
            let ready = poll(&entry, 1, left)
            if ready > 0 { return true }
            if ready == 0 { return false }
            guard errno == EINTR else { return true }
            left -= Int32(min(UInt64(left), (BootClock.seconds - started) * 1000))
            if left <= 0 { return false }
        }
    }

    /// One write(2) of all of `bytes`, EINTR retried, never continued: the count written or -1.
    /// For a line appended to an O_APPEND file, which lands whole or not at all.
    @discardableResult
    package static func writeOnce(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBytes { raw in SafeFile.retryingOnEINTR { Glibc.write(fd, raw.baseAddress, raw.count) } }
    }

    /// Writes all of `bytes`; nil when written, else why not.
    package func writeAll(_ bytes: [UInt8]) -> SystemErrno? { SafeFile.writeAll(raw, bytes) }

    /// Writes all of a plain text to `fd` (prompts, notices, messages: never a secret); nil
    /// when written, else why not.
    @discardableResult
    package static func write(_ text: String, to fd: Int32) -> SystemErrno? {
        var bytes = Array(text.utf8)
        defer { bytes.removeAll() }
        return SafeFile.writeAll(fd, bytes)
    }

    /// Reads exactly `count` bytes (see the static form).
    package func readExactly(_ count: Int, deadline: Int? = nil) -> [UInt8]? {
        Self.readExactly(raw, count, deadline: deadline)
    }

    /// Reads exactly `count` bytes from `fd`; nil at end of input, on an error, or at `deadline`
    /// (MonotonicClock milliseconds; each wait ends no later than it). On a socket, bytes already there are taken without a
    /// poll(2) first. What was read before a failure is wiped.
    package static func readExactly(_ fd: Int32, _ count: Int, deadline: Int?) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var offset = 0
        var tryWithoutWaiting = deadline != nil
        func fail() -> [UInt8]? {
            Sodium.wipe(&out)
            return nil
        }
        while offset < count {
            if tryWithoutWaiting {
                let got = out.withUnsafeMutableBytes { raw in
                    recv(fd, raw.baseAddress.map { $0 + offset }, count - offset, Int32(MSG_DONTWAIT))
                }
                if got > 0 {
                    offset += got
                    continue
                }
                if got == 0 { return fail() }
                switch errno {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK: break
                case ENOTSOCK: tryWithoutWaiting = false   // a pipe: poll, then read
                default: return fail()
                }
            }
            if let deadline {
                let left = deadline - MonotonicClock.milliseconds
                guard left > 0 else { return fail() }
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, Int32(clamping: left))
                if ready < 0, errno == EINTR { continue }
                guard ready > 0 else { return fail() }
            }
            let got = out.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress.map { $0 + offset }, count - offset)
            }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return fail() }
            offset += got
        }
        return out
    }
}

/// CLOCK_MONOTONIC in milliseconds: deadlines that a changed wall clock cannot move.
package enum MonotonicClock {
    package static var milliseconds: Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return ts.tv_sec * 1000 + ts.tv_nsec / 1_000_000
    }

    /// The same clock in nanoseconds.
    package static var nanoseconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
