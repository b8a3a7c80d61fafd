// The client's fast path to the gatekeeper's daemon (GateDaemon, docs/GATEKEEPER.md): one
// request on the daemon's socket, one answer. Used only for the requests the daemon
// answers (no prompt), and only when the socket's other end is root. Anything short of
// a success (no daemon, a refusal, an error, the deadline) returns nil, and the caller
// runs the setuid helper, which decides and says why. The request is sent first and the
// answer read later (`Pending`), so the client can do its own part of a read while the
// daemon decides.
internal import KeygateGateWire

enum GateDaemonLink {
    /// How long a daemon has to answer before the helper is asked instead: longer than the
    /// daemon gives one silent caller ahead of this one (GateDaemon.requestDeadlineMilliseconds).
    static let deadlineMilliseconds = 2000

    /// A request the daemon was sent, whose answer is read when the caller is ready for it.
    final class Pending {
        private var fd: Int32
        /// What was asked: a result frame does not say which operation it answers.
        private let operation: GateRequest.Operation

        fileprivate init(fd: Int32, operation: GateRequest.Operation) {
            self.fd = fd
            self.operation = operation
        }

        deinit { if fd >= 0 { Descriptor.close(fd) } }

        /// The daemon's answer, or nil (a refusal, an error, no answer within the deadline):
        /// then the caller asks the helper. Reads once; the connection is closed after.
        func answer() -> GateAnswer? {
            guard fd >= 0 else { return nil }
            defer {
                Descriptor.close(fd)
                fd = -1
            }
            guard var frame = GateWire.readFrame(fd, withinMilliseconds: deadlineMilliseconds) else { return nil }
            defer { Sodium.wipe(&frame) }
            // Anything but an answer (a refusal, a frame this client cannot read) sends the caller to the helper.
            guard case .result(.answer(let answer))? = try? GateMessage.decode(frame, answering: operation) else { return nil }
            return answer
        }
    }

    /// Sends `request` to the daemon; nil when the daemon does not serve it or cannot be reached.
    /// `environment`: the caller's edge's (which daemon, in test-hook builds).
    static func send(_ request: GateRequest, environment: KeygateEnvironment) -> Pending? {
        guard request.daemonAnswers else { return nil }
        // Everything is ready before connect(): the daemon wakes at the connection, and finds
        // the request already there instead of waiting for it (a second wake-up).
        var encoded = request.encoded()
        defer { Sodium.wipe(&encoded) }
        // A daemon gone between connect and write must not end this process with SIGPIPE.
        let brokenPipe = IgnoredSignal(.brokenPipe)
        defer { brokenPipe.restore() }
        let fd = UnixSocket.stream()
        guard fd >= 0 else { return nil }
        let pending = Pending(fd: fd, operation: request.operation)
        guard UnixSocket.connect(fd, to: GatekeeperPaths.socketPath(environment)) else { return nil }
        guard let peer = UnixSocket.peerCredentials(fd), peer.uid == 0, GateWire.writeFrame(fd, encoded) else { return nil }
        return pending
    }

    /// One request and its answer.
    static func ask(_ request: GateRequest, environment: KeygateEnvironment) -> GateAnswer? {
        send(request, environment: environment)?.answer()
    }
}
