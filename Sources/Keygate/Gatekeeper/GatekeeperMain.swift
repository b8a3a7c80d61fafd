// keygate-gatekeeper's process (docs/GATEKEEPER.md): a setuid-root helper in the manner of
// sudo and unix_chkpwd. Before it reads anything it makes itself safe to be run by anyone:
// a fixed environment (cleared; PATH and LC_ALL set), descriptors above 2 closed,
// non-dumpable, no core files, umask 077, and an alarm that ends it whatever happens
// (a person at a prompt included). Then it serves exactly one request from fd 0, writing
// to fd 1, for the real uid that ran it, starts the daemon if none runs (GateDaemon), and
// exits. With `--serve` (root only) it is that daemon.
internal import CSystem
internal import Glibc

public enum GatekeeperMain {
    /// The longest a gatekeeper lives: a prompt left unanswered ends with it.
    static let lifetimeSeconds: UInt32 = 300

    public static func run() -> Int32 {
        let hooks = testHookEnvironment()
        let daemonMode = CommandLine.arguments.dropFirst().first == "--serve"
        // Read before the environment is cleared; the daemon keeps its listening socket (fd 3)
        // and, when the helper started it, the lock (fd 4).
        let activation = daemonMode ? GateDaemon.Activation.fromEnvironment() : nil
        sanitize(keeping: hooks, keepDescriptors: daemonMode ? 2 : 0)
        if let activation { return GateDaemon.serve(activation, hooks: hooks) }
        let uid = getuid()
        let prompter = RelayPrompter(input: 0, output: 1)
        guard let frame = GateWire.readFrame(0) else { return 2 }
        var result: GateResult
        var servedByDaemon = false
        do {
            let request = try GateRequest.decode(frame)
            servedByDaemon = GateDaemon.serves(request)
            let user = try UserAccount.lookup(uid: uid)
            var confdir: String?
            var overrides = TestOverrides()
            #if KEYGATE_TEST_HOOKS
            confdir = hooks["KEYGATE_TEST_PAM_CONFDIR"].flatMap { $0.isEmpty ? nil : $0 }
            overrides = TestOverrides(environment: hooks)
            #endif
            let server = GateServer(user: user, caller: getppid(), prompter: prompter, pamConfdir: confdir, overrides: overrides)
            result = try server.handle(request)
        } catch let error as KeychainError {
            result = .failure(error)
        } catch is GateWireError {
            result = .failure(.param("""
                the gatekeeper refused a malformed request: the keygate that sent it does not match this gatekeeper; reinstall \
                keygate
                """))
        } catch {
            result = .failure(.notAvailable("the gatekeeper failed: \(error)"))
        }
        var encoded = GateMessage.result(result).encoded()
        result.wipeSecrets()
        defer { Sodium.wipe(&encoded) }
        let written = GateWire.writeFrame(1, encoded)
        // After a request the daemon could have answered, its next ones should not need this start.
        if written, servedByDaemon, result.keychainError == nil { GateDaemon.startIfAbsent(hooks: hooks) }
        return written ? 0 : 1
    }

    /// One line on stderr (the daemon's refusals to run; the helper's answers go to its caller).
    static func complain(_ message: String) {
        let line = Array(("keygate-gatekeeper: " + message + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// The variables test-hook builds pass through (none in release builds).
    private static func testHookEnvironment() -> [String: String] {
        #if KEYGATE_TEST_HOOKS
        var kept: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let text = String(cString: entry)
            if text.hasPrefix("KEYGATE_TEST_"), let eq = text.firstIndex(of: "=") {
                kept[String(text[..<eq])] = String(text[text.index(after: eq)...])
            }
            p += 1
        }
        return kept
        #else
        return [:]
        #endif
    }

    private static func sanitize(keeping hooks: [String: String], keepDescriptors: Int32) {
        clearenv()
        setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1)
        setenv("LC_ALL", "C", 1)
        for (name, value) in hooks { setenv(name, value, 1) }
        // Descriptors above stderr: nothing the caller left open reaches PAM modules.
        for fd in (3 + keepDescriptors)..<Int32(1024) { close(fd) }
        _ = keygate_set_nondumpable()
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        umask(0o077)
        // Standard descriptors that are closed would be reused by the first open: fill them.
        for fd in Int32(0)...2 where fcntl(fd, F_GETFD) < 0 { _ = open("/dev/null", O_RDWR) }
        signal(SIGPIPE, SIG_IGN)
        // Ctrl-C and Ctrl-\ at a prompt reach the whole foreground job: they are the caller's to
        // handle (it cancels, and its closed pipe ends this process with a clean answer).
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        alarm(lifetimeSeconds)
    }
}
