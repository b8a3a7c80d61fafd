// Unix stream sockets by path, for the gatekeeper's daemon and its clients (docs/GATEKEEPER.md):
// one close-on-exec socket, bind and connect with the path in a sockaddr_un, EINTR retried;
// the daemon's side: a listening socket of a given mode, callers accepted close-on-exec, the
// peer's credentials and a pidfd for it (CSystem/peer.h), and whether that process still runs.
// A path too long for sun_path fails with ENAMETOOLONG instead of being cut.
internal import CSystem
internal import Glibc

package enum UnixSocket {
    /// A new close-on-exec stream socket, or -1.
    package static func stream() -> Int32 {
        socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// A connected pair of close-on-exec stream sockets (socketpair(2)), or why not.
    package static func pair() -> Result<(Int32, Int32), SystemErrno> {
        var pair: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            return .failure(.current)
        }
        return .success((pair[0], pair[1]))
    }

    /// Sends all of `bytes` on the socket `fd` (send(2) with MSG_NOSIGNAL: a peer that has gone
    /// is EPIPE, never SIGPIPE), EINTR retried, short sends continued; nil when sent, else why not.
    package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> SystemErrno? {
        var done = 0
        while done < bytes.count {
            let n = SafeFile.retryingOnEINTR {
                bytes.withUnsafeBytes { send(fd, $0.baseAddress.map { $0 + done }, $0.count - done, Int32(MSG_NOSIGNAL)) }
            }
            if n < 0 { return .current }
            done += n
        }
        return nil
    }

    /// The uid and pid the kernel recorded for the other end of the connected socket `fd`
    /// (SO_PEERCRED, through CSystem's keygate_peer_credentials), or nil.
    package static func peerCredentials(_ fd: Int32) -> (uid: UInt32, pid: Int32)? {
        var uid: uid_t = 1
        var pid: pid_t = 0
        guard keygate_peer_credentials(fd, &uid, &pid) == 0 else { return nil }
        return (uid, pid)
    }

    /// A listening socket at `path` (any file there replaced), created with `mode` (the umask is
    /// set around bind(2) alone), or nil.
    package static func listening(at path: String, mode: UInt32, backlog: Int32) -> Int32? {
        let fd = stream()
        guard fd >= 0 else { return nil }
        unlink(path)
        let previous = umask(mode_t(~mode & 0o777))
        let bound = bind(fd, to: path)
        umask(previous)
        guard bound, Glibc.listen(fd, backlog) == 0 else {
            Glibc.close(fd)
            return nil
        }
        return fd
    }

    /// The listening socket's accept(2) will not block (a caller that left is no wait).
    package static func setNonBlocking(_ fd: Int32) -> Bool {
        let flags = fcntl(fd, F_GETFL)
        return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0
    }

    /// The next waiting connection, close-on-exec (accept4(2)), EINTR retried; nil when none is
    /// waiting or on an error. Out of descriptors (EMFILE, ENFILE), it waits 100 ms first.
    package static func accept(_ listener: Int32) -> Int32? {
        while true {
            let connection = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if connection >= 0 { return connection }
            if errno == EINTR { continue }
            if errno == EMFILE || errno == ENFILE { Pause.sleep(nanoseconds: 100_000_000, resumingAfterSignal: false) }
            return nil
        }
    }

    /// A send on `fd` gives up after `seconds` (SO_SNDTIMEO): a peer that reads nothing holds no one.
    package static func setSendTimeout(_ fd: Int32, seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// A pidfd for the process that connected (SO_PEERPIDFD, Linux 6.5; the caller closes it), or -1.
    package static func peerProcess(_ fd: Int32) -> Int32 { keygate_peer_pidfd(fd) }

    /// True while the process behind `pidfd` is not reaped: its pid still names it, not a successor.
    package static func processIsAlive(_ pidfd: Int32) -> Bool { keygate_pidfd_alive(pidfd) != 0 }

    /// connect(2) to `path`; true when it is accepted.
    package static func connect(_ fd: Int32, to path: String) -> Bool {
        while true {
            let rc = withAddress(path) { Glibc.connect(fd, $0, $1) }
            if rc == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    /// bind(2) to `path`; true when it is bound.
    package static func bind(_ fd: Int32, to path: String) -> Bool {
        withAddress(path) { Glibc.bind(fd, $0, $1) } == 0
    }

    /// Calls `body` with a sockaddr_un for `path` (-1 with ENAMETOOLONG when it does not fit).
    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else {
            errno = ENAMETOOLONG
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }
}
