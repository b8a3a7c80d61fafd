// keygate-gatekeeper's process (docs/GATEKEEPER.md): a setuid-root helper in the manner of
// sudo and unix_chkpwd. Its first lines are C (Sources/CGatekeeperStart), run by the loader
// before the Swift runtime starts: the environment scrubbed, resource limits reset, signals
// back to their defaults, every descriptor above 2 closed. Here it then reads who called it,
// takes root's ids in full (real and saved too: the user who started it can no longer signal,
// stop or trace it, so an authentication it runs cannot be cut short), and sets a fixed
// environment, non-dumpable, umask 077, and an alarm that ends it whatever happens. Then it
// serves exactly one request from fd 0, writing to fd 1, for the real uid that ran it, starts
// the daemon if none runs (GateDaemon), and exits. With `--serve` (root only) it is that daemon;
// with `--forget-user UID` (root only) it forgets what root keeps for a removed uid (ForgetUser).
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import KeygateSystemBus
internal import CSystem
internal import Glibc
import KeygateIdentity

public enum GatekeeperMain {
    /// The longest a gatekeeper lives: a prompt left unanswered ends with it.
    static let lifetimeSeconds: UInt32 = 300

    public static func run() -> Int32 {
        // The environment the caller gave, read before it is cleared: the test hooks (none in
        // release builds) and, for the daemon, its socket activation; the daemon keeps its
        // listening socket (fd 3) and, when the helper started it, the lock (fd 4).
        let given = KeygateEnvironment.process()
        let hooks = given.testHooks.variables
        let daemonMode = CommandLine.arguments.dropFirst().first == "--serve"
        let activation = daemonMode ? GateDaemon.Activation.fromEnvironment(given) : nil
        sanitize(keeping: given.testHooks)
        // The environment it runs with, read once and passed down (KeygateEnvironment): PATH, LC_ALL and,
        // in test-hook builds only, the hooks kept above.
        let environment = KeygateEnvironment.process()
        if let activation {
            guard getuid() == 0, geteuid() == 0 else {
                complain("""
                    keygate-gatekeeper --serve runs as root only: systemd's keygate-gatekeeper.socket starts it, or the gatekeeper \
                    itself
                    """)
                return 2
            }
            // A daemon: no lifetime alarm; "keygate-gated" in ps and top (the image is /proc/self/exe, which
            // would read "exe"); every page it touches stays in RAM, so the secrets it keeps and the shares it
            // sends never reach swap (root: no RLIMIT_MEMLOCK applies).
            alarm(0)
            _ = keygate_set_process_name("keygate-gated")
            _ = keygate_lock_all_memory()
            return GateDaemon.serve(activation, hooks: hooks, environment: environment)
        }
        // Who called, read before root's ids replace the caller's.
        let uid = getuid()
        // Root's administration (`keygate forget-user`, run by root): root's code, in root's program.
        if CommandLine.arguments.dropFirst().first == "--forget-user" {
            guard uid == 0, geteuid() == 0 else {
                complain("--forget-user runs as root only (it removes root's state): run `sudo keygate forget-user UID`")
                return 2
            }
            return ForgetUser.main(Array(CommandLine.arguments.dropFirst(2)), environment: environment)
        }
        let caller = CallerScope.helperCaller()
        guard UserIdentity.becomeRootInFull() else {
            complain("could not take root's ids (setresuid): the gatekeeper must be installed setuid root")
            return 1
        }
        let prompter = RelayPrompter(input: 0, output: 1)
        guard let frame = GateWire.readFrame(0) else { return 2 }
        var result: GateResult
        var servedByDaemon = false
        do {
            let request = try GateRequest.decode(frame)
            servedByDaemon = request.daemonAnswers
            guard let caller else { throw CallerScope.callerGone() }
            // Root may have another user's class keys sealed (a passwordless keychain: HostProtectorAdmin).
            var subjectUID: UInt32?
            if case .certify(let certification) = request.call { subjectUID = certification.subjectUID }
            if subjectUID != nil, uid != 0 {
                throw KeychainError.param("only root may ask the gatekeeper to seal another user's keys")
            }
            let user = try UserAccount.lookup(uid: subjectUID ?? uid)
            try environment.testHooks.check()
            var server = GateServer(user: user, caller: caller, prompter: prompter, pamConfdir: environment.testHooks.pamConfdir,
                                    overrides: environment.testHooks.overrides, environment: environment)
            server.rootAsks = subjectUID != nil
            result = .answer(try server.handle(request))
            // The scope was read from /proc/CALLER: it was the caller's only if the caller is still this
            // helper's parent (one that exited meanwhile re-parented the helper and freed its pid).
            if getppid() != caller {
                result.wipeSecrets()
                throw CallerScope.callerGone()
            }
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
        if written, servedByDaemon, result.keychainError == nil { GateDaemon.startIfAbsent(hooks: hooks, environment: environment) }
        return written ? 0 : 1
    }

    /// Runs the gatekeeper (`run`) and ends the process with its status (exit(3)): the
    /// keygate-gatekeeper executable's one line.
    public static func runAndExit() -> Never {
        ProcessExit.now(run())
    }

    /// One line on stderr (the daemon's refusals to run; the helper's answers go to its caller).
    static func complain(_ message: String) {
        let line = Array(("keygate-gatekeeper: " + message + "\n").utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// What the C start (CGatekeeperStart) leaves to Swift: the environment the program runs
    /// with, non-dumpable, umask, and the signals it handles itself.
    private static func sanitize(keeping hooks: TestHooks) {
        clearenv()
        setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin", 1)
        setenv("LC_ALL", "C", 1)
        for (name, value) in hooks.variables { setenv(name, value, 1) }
        // A private system bus (scripts/fprint-session) for pam_fprintd and FprintdProbe.
        TestSystemBus.use(hooks)
        _ = keygate_set_nondumpable()
        umask(0o077)
        signal(SIGPIPE, SIG_IGN)
        // A write past a file-size limit the start could not raise (no CAP_SYS_RESOURCE, as in a
        // container) fails with EFBIG and is reported, instead of killing the process mid-write.
        signal(SIGXFSZ, SIG_IGN)
        // Ctrl-C and Ctrl-\ at a prompt reach the whole foreground job: they are the caller's to
        // handle (it cancels, and its closed pipe ends this process with a clean answer).
        signal(SIGINT, SIG_IGN)
        signal(SIGQUIT, SIG_IGN)
        alarm(lifetimeSeconds)
    }
}
