// keygate-gatekeeper's daemon mode (docs/GATEKEEPER.md, docs/DECISIONS.md): the same
// gatekeeper, kept up so that a read inside its window is one round trip on a Unix
// socket instead of a setuid program's start. It answers only what needs no prompt
// (open, presence, check, keys); anything else, any refusal and any failure sends the
// caller to the setuid helper, which decides with PAM. So the daemon adds speed, never
// a decision of its own: the helper and the daemon share GateServer.
//
// Started two ways, with one protocol (systemd's socket activation: the listening
// socket is fd 3, LISTEN_FDS=1):
// - by systemd (contrib/systemd/keygate-gatekeeper.socket and .service, sandboxed);
// - where systemd is not PID 1, by the setuid helper itself after a request it served,
//   when nothing listens: it binds the socket, takes the daemon lock, becomes root in
//   full (real and saved ids too, so the user who started it cannot signal or trace it),
//   and executes itself in daemon mode with a clean environment.
// The peer is the process the kernel recorded at connect() (SO_PEERCRED), held by a pidfd
// (SO_PEERPIDFD): a reply goes out only if that process was still there after its scope
// was read from /proc, so a recycled pid never borrows a window. It ends after
// `idleSeconds` without a call, or within a second of its binary being replaced (an upgrade).
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import KeygateStorage
internal import CSystem
internal import Glibc

enum GateDaemon {
    /// Test-hook builds: 30 s, so the suite's daemons end soon after its tests.
    static let idleSeconds: Int32 = TestHooks.compiledIn ? 30 : 600
    /// How long one caller may take to send its request (a client sends it as soon as it is
    /// connected), and to send the rest once it has begun: the daemon answers one caller at a time,
    /// so one that trickles its bytes holds the others this long at most. A caller cut off runs the
    /// helper instead.
    static let requestDeadlineMilliseconds = 250
    static let requestRestMilliseconds = 50
    /// LISTEN_FDNAMES of a daemon the helper started (it removes its socket when it ends).
    static let selfStartedName = "keygate-self-started"

    // MARK: Daemon

    /// What socket activation handed over (systemd's protocol), read before the environment is cleared.
    struct Activation {
        /// LISTEN_FDS=1 for this pid: the listening socket is fd 3.
        var listening: Bool
        /// The helper started this daemon (it removes the socket when it ends; systemd's stays).
        var selfStarted: Bool

        static func fromEnvironment(_ environment: KeygateEnvironment) -> Activation {
            let passed = environment.socketActivation
            return Activation(listening: passed.descriptors == 1 && passed.pid == getpid(),
                              selfStarted: passed.names == selfStartedName)
        }
    }

    /// Serves the listening socket (fd 3) until idle. Root only: run by systemd or by the helper.
    static func serve(_ activation: Activation, hooks: [String: String], environment: KeygateEnvironment) -> Int32 {
        guard getuid() == 0, geteuid() == 0 else {
            GatekeeperMain.complain("""
                keygate-gatekeeper --serve runs as root only: systemd's keygate-gatekeeper.socket starts it, or the gatekeeper \
                itself
                """)
            return 2
        }
        guard activation.listening else {
            GatekeeperMain.complain("keygate-gatekeeper --serve needs its listening socket as fd 3 (systemd socket activation: LISTEN_FDS=1)")
            return 2
        }
        alarm(0)
        // "keygate-gated" in ps and top (the image is /proc/self/exe, which would read "exe").
        _ = keygate_set_process_name("keygate-gated")
        // Every page it touches stays in RAM: the secrets it keeps and the shares it sends
        // never reach swap, whatever memory they sit in (root: no RLIMIT_MEMLOCK applies).
        _ = keygate_lock_all_memory()
        ParsedFileCache.enable()
        GateRecordsCache.enable()
        let cache = GateDaemonCache()
        let listener: Int32 = 3
        let overrides = environment.testHooks.overrides
        // An upgrade is noticed at most a second late, with or without calls: a readlink of
        // /proc/self/exe per request would be measurable on a read inside its window.
        var lastUpgradeCheck = GateRecords.now
        var idleSince = lastUpgradeCheck
        // Every caller waits at once (GateCallerQueue): accept never blocks, so a caller that says
        // nothing holds no one.
        _ = fcntl(listener, F_SETFL, fcntl(listener, F_GETFL) | O_NONBLOCK)
        var queue = GateCallerQueue()
        while true {
            var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                + queue.callers.map { pollfd(fd: $0.fd, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&entries, nfds_t(entries.count), queue.pollTimeout(now: MonotonicClock.milliseconds, idle: 1000))
            let now = GateRecords.now
            if now != lastUpgradeCheck {
                lastUpgradeCheck = now
                if binaryReplaced { break }
            }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0, queue.isEmpty {
                if now - idleSince >= UInt64(idleSeconds) { break }
                continue
            }
            idleSince = now
            if entries[0].revents != 0 { admitCallers(listener, into: &queue) }
            var arrived = Set(entries.dropFirst().filter { $0.revents != 0 }.map(\.fd))
            while let caller = queue.next(among: arrived) {
                arrived.remove(caller.fd)
                answer(caller, overrides: overrides, cache: cache, environment: environment)
                close(caller.fd)
            }
            for caller in queue.expire(now: MonotonicClock.milliseconds) { close(caller.fd) }
        }
        for caller in queue.callers { close(caller.fd) }
        // The socket is removed before the lock goes (at exit), so no caller waits on a dead socket.
        if activation.selfStarted { unlink(GatekeeperPaths.socketPath(environment)) }
        return 0
    }

    /// Accepts every caller waiting on the listening socket; one the queue turns away is closed at
    /// once (its client runs the setuid helper).
    private static func admitCallers(_ listener: Int32, into queue: inout GateCallerQueue) {
        while true {
            let connection = accept4(listener, nil, nil, Int32(SOCK_CLOEXEC.rawValue))
            if connection < 0 {
                if errno == EINTR { continue }
                if errno == EMFILE || errno == ENFILE { usleep(100_000) }
                return
            }
            var uid: uid_t = 0
            var pid: pid_t = 0
            let deadline = MonotonicClock.milliseconds + requestDeadlineMilliseconds
            guard keygate_peer_credentials(connection, &uid, &pid) == 0, pid > 0,
                  queue.admit(.init(fd: connection, uid: uid, pid: pid, deadline: deadline)) else {
                close(connection)
                continue
            }
        }
    }

    /// One caller whose request has arrived: answered for its uid and its scope, or a refusal that
    /// sends it to the helper.
    private static func answer(_ caller: GateCallerQueue.Caller, overrides: TestOverrides, cache: GateDaemonCache,
                               environment: KeygateEnvironment) {
        let connection = caller.fd, uid = caller.uid, pid = caller.pid
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        _ = setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let pidfd = keygate_peer_pidfd(connection)
        defer { if pidfd >= 0 { close(pidfd) } }
        // The request has begun to arrive: the rest of it comes at once from a real client.
        let left = max(1, min(requestRestMilliseconds, caller.deadline - MonotonicClock.milliseconds))
        guard var frame = GateWire.readFrame(connection, withinMilliseconds: left) else { return }
        defer { Sodium.wipe(&frame) }
        var result: GateResult
        do {
            guard pidfd >= 0 else {
                throw KeychainError.notAvailable("""
                    this kernel gives no pidfd for a socket's peer (SO_PEERPIDFD, Linux 6.5): the setuid gatekeeper answers instead
                    """)
            }
            var request = try GateRequest.decode(frame)
            guard request.daemonAnswers else {
                throw KeychainError.interactionNotAllowed("the gatekeeper's daemon does not answer this request: the setuid gatekeeper does")
            }
            request.flags.insert(.noPrompt)
            let user = try cache.user(uid: uid)
            let server = GateServer(user: user, caller: pid, prompter: SilentPrompter(), pamConfdir: nil, overrides: overrides,
                                    environment: environment, cache: cache)
            result = try server.handle(request)
            // The scope was read from /proc/PID: it was the peer's only if the peer is still there.
            guard keygate_pidfd_alive(pidfd) != 0 else { return }
        } catch let error as KeychainError {
            result = .failure(error)
        } catch {
            result = .failure(.param("the gatekeeper's daemon refused a malformed request"))
        }
        var encoded = GateMessage.result(result).encoded()
        result.wipeSecrets()
        defer { Sodium.wipe(&encoded) }
        _ = GateWire.writeFrame(connection, encoded)
    }

    /// True once the file this process runs was replaced or removed (an upgrade, an uninstall).
    private static var binaryReplaced: Bool {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return false }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self).hasSuffix(" (deleted)")
    }

    // MARK: Start by the helper

    /// Called by the setuid helper after it served a request: when no daemon answers on the
    /// socket, and none holds the lock, starts one (as root in full, from a clean image).
    static func startIfAbsent(hooks: [String: String], environment: KeygateEnvironment) {
        guard geteuid() == 0, limitsAreRoots, !isListening(environment) else { return }
        do {
            try GatekeeperPaths.makeFolder(GatekeeperPaths.runRoot, mode: 0o711)
            _ = chmod(GatekeeperPaths.runRoot, 0o711)
            try GatekeeperPaths.makeFolder(GatekeeperPaths.socketFolder, mode: 0o755)
            _ = chmod(GatekeeperPaths.socketFolder, 0o755)
        } catch {
            return
        }
        let lock = SafeFile.openLockFile(GatekeeperPaths.daemonLockPath(environment))
        guard lock >= 0 else { return }
        defer { close(lock) }
        guard flock(lock, LOCK_EX | LOCK_NB) == 0 else { return }   // another daemon is starting or running
        guard let listener = bindSocket(environment) else { return }
        defer { close(listener) }
        let executable = "/proc/self/exe"
        let argv = CStringArray(["keygate-gatekeeper", "--serve"])
        var variables = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LISTEN_FDS=1",
                         "LISTEN_FDNAMES=" + selfStartedName]
        for (name, value) in hooks { variables.append(name + "=" + value) }
        // LISTEN_PID is the child's pid, known only after fork: the child fills it in (one slot kept).
        variables.append("LISTEN_PID=0000000000")
        let environment = CStringArray(variables)
        guard let pidSlot = environment.pointers[variables.count - 1] else { return }
        let child = fork()
        guard child == 0 else { return }   // the parent (or a failed fork) goes on; the lock is the child's now
        // The child: only async-signal-safe C from here to exec.
        _ = setsid()
        guard setgroups(0, nil) == 0, setresgid(0, 0, 0) == 0, setresuid(0, 0, 0) == 0 else { _exit(126) }
        var limits = rlimit(rlim_cur: 1024, rlim_max: 4096)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits)
        for resource in [RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK] {
            var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
            if resource == RLIMIT_STACK { unlimited.rlim_cur = 8 * 1024 * 1024 }
            _ = setrlimit(__rlimit_resource_t(resource.rawValue), &unlimited)
        }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 0)
        keygate_fill_listen_pid(pidSlot)
        let devnull = open("/dev/null", O_RDWR)
        if devnull >= 0 { for fd in Int32(0)...2 { dup2(devnull, fd) } }
        // Both above 4 first: the lock may itself be fd 3 (or the listener fd 4), and moving one
        // onto 3 would close the other (the daemon then held no lock and two copies of its socket).
        let listenerCopy = fcntl(listener, F_DUPFD, 5), lockCopy = fcntl(lock, F_DUPFD, 5)
        guard listenerCopy >= 5, lockCopy >= 5, dup2(listenerCopy, 3) == 3, dup2(lockCopy, 4) == 4 else { _exit(126) }
        close(listenerCopy)
        close(lockCopy)
        execve(executable, argv.pointers, environment.pointers)
        _exit(127)
    }

    /// False when the caller's resource limits are still on this process (the start could not raise
    /// them: no CAP_SYS_RESOURCE, as in a container). A daemon started now would keep them and serve
    /// every user with them, so the helper then starts none.
    private static var limitsAreRoots: Bool {
        var size = rlimit(), files = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &size) == 0,
              getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0 else { return false }
        return size.rlim_cur == rlim_t.max && files.rlim_cur >= 1024
    }

    /// True when something answers on the socket (a running daemon, or systemd's socket).
    private static func isListening(_ environment: KeygateEnvironment) -> Bool {
        let fd = UnixSocket.stream()
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return UnixSocket.connect(fd, to: GatekeeperPaths.socketPath(environment))
    }

    /// A listening socket at the daemon's path, mode 0666 (every user may call; root's folder).
    private static func bindSocket(_ environment: KeygateEnvironment) -> Int32? {
        let fd = UnixSocket.stream()
        guard fd >= 0 else { return nil }
        let path = GatekeeperPaths.socketPath(environment)
        unlink(path)
        let previous = umask(0o111)
        defer { umask(previous) }
        guard UnixSocket.bind(fd, to: path), listen(fd, 64) == 0 else {
            close(fd)
            return nil
        }
        return fd
    }
}
