// The client's side of the gatekeeper (docs/GATEKEEPER.md): asks the gatekeeper's daemon
// first when the request needs no prompt (GateDaemonLink); otherwise, or when the daemon
// does not answer yes, runs keygate-gatekeeper with a request on a pipe, answers its prompts through this process's Prompter (terminal,
// askpass, pinentry), and returns its result. The answer to the last no-echo prompt is
// kept in locked memory: it is the password of the authentication that succeeded, which
// the keychain also needs to open its master key. Nothing goes into argv or the environment.
internal import KeygateGateWire

struct GateClient {
    let prompter: any Prompter
    /// The edge's environment, passed down: where the gatekeeper is (test hooks).
    let environment: KeygateEnvironment
    /// Receives the gatekeeper's audit events (event, PAM service, detail) for the client's trail.
    var onAudit: (AuditEvent, String, String) -> Void = { _, _, _ in }

    /// What the gatekeeper returned, with the password typed during the call (if any).
    struct Reply {
        var result: GateAnswer
        var password: SecureBytes?
    }

    /// Runs one request; throws the gatekeeper's error, or .notAvailable when it cannot run.
    func call(_ request: GateRequest) throws -> Reply {
        try call(request, meanwhile: {})
    }

    /// Runs one request, and `meanwhile` while the daemon works on it (after the helper's answer
    /// when the helper answers instead): a read opens its own half of the item in that time.
    func call(_ request: GateRequest, meanwhile: () throws -> Void) throws -> Reply {
        if let pending = GateDaemonLink.send(request, environment: environment) {
            try meanwhile()
            if let result = pending.answer() { return Reply(result: result, password: nil) }
            return try callHelper(request)
        }
        let reply = try callHelper(request)
        try meanwhile()
        return reply
    }

    /// The setuid helper: one request, its prompts relayed through `prompter`.
    private func callHelper(_ request: GateRequest) throws -> Reply {
        let path = try GatekeeperLocator.path(environment: environment)
        if !TestHooks.compiledIn, ProcessIdentity.uid != 0, !GatekeeperLocator.isSetuidRoot(path) {
            throw KeychainError.notAvailable("""
                \(path) is not setuid root, so it cannot keep your gate keys from your other processes: reinstall keygate (`sudo \
                make install` or the package); `keygate doctor` checks it
                """)
        }
        // Close-on-exec from the start: no other child inherits an end.
        guard case .success(let toHelper) = Descriptor.pipe(), case .success(let fromHelper) = Descriptor.pipe() else {
            throw Self.noPipe()
        }
        var spawn = Spawn([path])
        spawn.descriptors = [0: .descriptor(toHelper.read.raw), 1: .descriptor(fromHelper.write.raw)]
        let child: Spawn.Child
        switch spawn.start() {
        case .success(let started): child = started
        case .failure(let e):
            throw KeychainError.notAvailable("Keygate's gatekeeper \(path) could not be started (\(e.text)): reinstall keygate")
        }
        toHelper.read.close()
        fromHelper.write.close()
        // SIGPIPE would kill this process if the gatekeeper died first: a write error instead.
        let brokenPipe = IgnoredSignal(.brokenPipe)
        var abandoned = false
        defer {
            // Closed before the wait: a gatekeeper waiting for an answer reads the end and exits.
            toHelper.write.close()
            brokenPipe.restore()
            if abandoned { child.collectIfEnded() } else { _ = child.wait() }
        }
        var encoded = request.encoded()
        defer { Sodium.wipe(&encoded) }
        guard GateWire.writeFrame(toHelper.write.raw, encoded) else { throw Self.died(path) }
        var password: SecureBytes?
        while true {
            guard Descriptor.waitReadable(fromHelper.read.raw, milliseconds: Self.answerDeadlineMilliseconds) else {
                // A setuid gatekeeper runs with root's ids in full, so the caller cannot stop it: it is
                // left to end by its own alarm (GatekeeperMain.lifetimeSeconds), unwaited for.
                abandoned = child.kill() != nil
                throw KeychainError.notAvailable("""
                    Keygate's gatekeeper \(path) did not answer within \(Self.answerDeadlineMilliseconds / 1000) s (a PAM module or a \
                    file it reads may hang): nothing was opened; see the system log, and run `keygate doctor`
                    """)
            }
            guard var frame = GateWire.readFrame(fromHelper.read.raw) else { throw Self.died(path) }
            defer { Sodium.wipe(&frame) }
            let message: GateMessage
            do { message = try GateMessage.decode(frame, answering: request.operation) } catch {
                throw KeychainError.notAvailable("""
                    Keygate's gatekeeper \(path) answered something this keygate cannot read: reinstall keygate so that both come from \
                    one version
                    """)
            }
            switch message {
            case .promptSecret(let text), .promptVisible(let text):
                let answer = try prompter.readSecret(prompt: text)
                if case .promptSecret = message { password = answer }
                var reply = GateMessage.answerFrame(answer)
                defer { Sodium.wipe(&reply) }
                guard GateWire.writeFrame(toHelper.write.raw, reply) else { throw Self.died(path) }
            case .notice(let text):
                prompter.notify(text)
            case .audit(let event, let service, let detail):
                if let known = AuditEvent(rawValue: event) { onAudit(known, service, detail) }
            case .result(let result):
                return Reply(result: try result.get(), password: password)
            }
        }
    }

    /// How long the gatekeeper may work between two messages (a prompt's answer does not count:
    /// the person's time is spent here, in the prompter). Its own alarm ends it after 300 s.
    static let answerDeadlineMilliseconds: Int32 = 120_000

    private static func noPipe() -> KeychainError {
        .notAvailable("cannot create a pipe to Keygate's gatekeeper (\(SystemErrno.last.text)): raise the open-file limit")
    }

    private static func died(_ path: String) -> KeychainError {
        .notAvailable("Keygate's gatekeeper \(path) ended without an answer: see the system log (journalctl -t keygate), and run `keygate doctor`")
    }
}
