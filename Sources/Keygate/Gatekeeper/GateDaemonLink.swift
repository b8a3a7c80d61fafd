// The client's fast path to the gatekeeper's daemon (GateDaemon, docs/GATEKEEPER.md): one
// request on the daemon's socket, one answer. Used only for the requests the daemon
// answers (no prompt), and only when the socket's other end is root. Anything short of
// a success (no daemon, a refusal, an error, the deadline) returns nil, and the caller
// runs the setuid helper, which decides and says why.
internal import CSystem
internal import Glibc

enum GateDaemonLink {
    /// How long a daemon has to answer before the helper is asked instead: longer than the
    /// daemon gives one silent caller ahead of this one (GateDaemon.requestDeadlineMilliseconds).
    static let deadlineMilliseconds = 2000

    static func ask(_ request: GateRequest) -> GateResult? {
        guard GateDaemon.serves(request) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard GateDaemon.connect(fd, GatekeeperPaths.socketPath) else { return nil }
        var uid: uid_t = 1
        var pid: pid_t = 0
        guard keygate_peer_credentials(fd, &uid, &pid) == 0, uid == 0 else { return nil }
        // A daemon gone between connect and write must not end this process with SIGPIPE.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        var encoded = request.encoded()
        defer { Sodium.wipe(&encoded) }
        guard GateWire.writeFrame(fd, encoded),
              var frame = GateWire.readFrame(fd, withinMilliseconds: deadlineMilliseconds) else { return nil }
        defer { Sodium.wipe(&frame) }
        guard case .result(let result)? = try? GateMessage.decode(frame), result.keychainError == nil else { return nil }
        return result
    }
}
