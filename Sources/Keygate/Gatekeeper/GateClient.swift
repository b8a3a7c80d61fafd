// The client's side of the gatekeeper (docs/GATEKEEPER.md): runs keygate-gatekeeper with
// a request on a pipe, answers its prompts through this process's Prompter (terminal,
// askpass, pinentry), and returns its result. The answer to the last no-echo prompt is
// kept in locked memory: it is the password of the authentication that succeeded, which
// the keychain also needs to open its master key. Nothing goes into argv or the environment.
internal import Glibc

struct GateClient {
    let prompter: any Prompter
    /// Receives the gatekeeper's audit events (event, PAM service, detail) for the client's trail.
    var onAudit: (AuditEvent, String, String) -> Void = { _, _, _ in }

    /// What the gatekeeper returned, with the password typed during the call (if any).
    struct Reply {
        var result: GateResult
        var password: SecureBytes?
    }

    /// Runs one request; throws the gatekeeper's error, or .notAvailable when it cannot run.
    func call(_ request: GateRequest) throws -> Reply {
        let path = try GatekeeperLocator.path()
        #if !KEYGATE_TEST_HOOKS
        if getuid() != 0, !GatekeeperLocator.isSetuidRoot(path) {
            throw KeychainError.notAvailable("\(path) is not setuid root, so it cannot keep your gate keys from your other processes: reinstall keygate (`sudo make install` or the package); `keygate doctor` checks it")
        }
        #endif
        var toHelper: [Int32] = [-1, -1]
        var fromHelper: [Int32] = [-1, -1]
        guard pipe(&toHelper) == 0 else { throw Self.noPipe() }
        guard pipe(&fromHelper) == 0 else {
            close(toHelper[0]); close(toHelper[1])
            throw Self.noPipe()
        }
        // The parent's ends must not leak into other children.
        _ = fcntl(toHelper[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fromHelper[0], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toHelper[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromHelper[1], 1)
        posix_spawn_file_actions_addclose(&actions, toHelper[0])
        posix_spawn_file_actions_addclose(&actions, fromHelper[1])
        let argv = CStringArray([path])
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv.pointers, environ)
        close(toHelper[0])
        close(fromHelper[1])
        defer { close(fromHelper[0]) }
        guard rc == 0 else {
            throw KeychainError.notAvailable("Keygate's gatekeeper \(path) could not be started (\(String(cString: strerror(rc)))): reinstall keygate")
        }
        // SIGPIPE would kill this process if the gatekeeper died first: a write error instead.
        let previous = signal(SIGPIPE, SIG_IGN)
        defer {
            // Closed before the wait: a gatekeeper waiting for an answer reads the end and exits.
            close(toHelper[1])
            signal(SIGPIPE, previous)
            Self.reap(pid)
        }
        var request = request.encoded()
        defer { Sodium.wipe(&request) }
        guard GateWire.writeFrame(toHelper[1], request) else { throw Self.died(path) }
        var password: SecureBytes?
        while true {
            guard var frame = GateWire.readFrame(fromHelper[0]) else { throw Self.died(path) }
            defer { Sodium.wipe(&frame) }
            let message: GateMessage
            do { message = try GateMessage.decode(frame) } catch {
                throw KeychainError.notAvailable("Keygate's gatekeeper \(path) answered something this keygate cannot read: reinstall keygate so that both come from one version")
            }
            switch message {
            case .promptSecret(let text), .promptVisible(let text):
                let answer = try prompter.readSecret(prompt: text)
                if case .promptSecret = message { password = answer }
                var reply = RelayPrompter.answerFrame(answer)
                defer { Sodium.wipe(&reply) }
                guard GateWire.writeFrame(toHelper[1], reply) else { throw Self.died(path) }
            case .notice(let text):
                prompter.notify(text)
            case .audit(let event, let service, let detail):
                if let known = AuditEvent(rawValue: event) { onAudit(known, service, detail) }
            case .result(let result):
                if let error = result.keychainError { throw error }
                return Reply(result: result, password: password)
            }
        }
    }

    private static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    private static func noPipe() -> KeychainError {
        .notAvailable("cannot create a pipe to Keygate's gatekeeper (\(String(cString: strerror(errno)))): raise the open-file limit")
    }

    private static func died(_ path: String) -> KeychainError {
        .notAvailable("Keygate's gatekeeper \(path) ended without an answer: see the system log (journalctl -t keygate), and run `keygate doctor`")
    }
}
