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
//   when nothing listens: it binds the socket, takes the daemon lock and starts itself in
//   daemon mode through the one spawn door (Spawn: posix_spawn, a session of its own, a
//   clean environment), with the ids it already holds: root in full, real and saved too
//   (UserIdentity.becomeRootInFull), so the user who started it cannot signal or trace it.
// Every system call goes through KeygateCore/System's wrappers (SystemDoorTests).
// The peer is the process the kernel recorded at connect() (SO_PEERCRED), held by a pidfd
// (SO_PEERPIDFD): a reply goes out only if that process was still there after its scope
// was read from /proc, so a recycled pid never borrows a window. It ends after
// `idleSeconds` without a call, or within a second of its binary being replaced (an upgrade).
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

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
        /// LISTEN_FDS=1 for this pid (systemd's LISTEN_PID), or for the daemon the helper started
        /// (LISTEN_FDNAMES names it; a spawn cannot know the child's pid before it starts): the
        /// listening socket is fd 3. Only root runs `--serve` at all (GatekeeperMain).
        var listening: Bool
        /// The helper started this daemon (it removes the socket when it ends; systemd's stays).
        var selfStarted: Bool

        static func fromEnvironment(_ environment: KeygateEnvironment) -> Activation {
            let passed = environment.socketActivation
            let selfStarted = passed.names == selfStartedName
            let forThisProcess = selfStarted ? passed.pid == nil : passed.pid == ProcessIdentity.pid
            return Activation(listening: passed.descriptors == 1 && forThisProcess, selfStarted: selfStarted)
        }
    }

    /// Serves the listening socket (fd 3) until idle. Root only (GatekeeperMain checks, and sets
    /// the process up: no alarm, its name, its memory locked): run by systemd or by the helper.
    static func serve(_ activation: Activation, hooks: [String: String], environment: KeygateEnvironment) -> Int32 {
        guard activation.listening else {
            GatekeeperMain.complain("keygate-gatekeeper --serve needs its listening socket as fd 3 (systemd socket activation: LISTEN_FDS=1)")
            return 2
        }
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
        _ = UnixSocket.setNonBlocking(listener)
        var queue = GateCallerQueue()
        serving: while true {
            let watched = [listener] + queue.callers.map(\.fd)
            let outcome = Readiness.wait(forInput: watched,
                                         milliseconds: Int32(queue.pollTimeout(now: MonotonicClock.milliseconds, idle: 1000)))
            let now = GateRecords.now
            if now != lastUpgradeCheck {
                lastUpgradeCheck = now
                if binaryReplaced { break }
            }
            let ready: [Bool]
            switch outcome {
            case .interrupted: continue serving
            case .failed: break serving
            case .ready(let found): ready = found
            }
            if !ready.contains(true), queue.isEmpty {
                if now - idleSince >= UInt64(idleSeconds) { break }
                continue
            }
            idleSince = now
            if ready[0] { admitCallers(listener, into: &queue) }
            var arrived = Set(zip(watched, ready).dropFirst().filter(\.1).map(\.0))
            while let caller = queue.next(among: arrived) {
                arrived.remove(caller.fd)
                answer(caller, overrides: overrides, cache: cache, environment: environment)
                Descriptor.close(caller.fd)
            }
            for caller in queue.expire(now: MonotonicClock.milliseconds) { Descriptor.close(caller.fd) }
        }
        for caller in queue.callers { Descriptor.close(caller.fd) }
        // The socket is removed before the lock goes (at exit), so no caller waits on a dead socket.
        if activation.selfStarted { FileSystem.remove(GatekeeperPaths.socketPath(environment)) }
        return 0
    }

    /// Accepts every caller waiting on the listening socket; one the queue turns away is closed at
    /// once (its client runs the setuid helper).
    private static func admitCallers(_ listener: Int32, into queue: inout GateCallerQueue) {
        while let connection = UnixSocket.accept(listener) {
            let deadline = MonotonicClock.milliseconds + requestDeadlineMilliseconds
            guard let peer = UnixSocket.peerCredentials(connection), peer.pid > 0,
                  queue.admit(.init(fd: connection, uid: peer.uid, pid: peer.pid, deadline: deadline)) else {
                Descriptor.close(connection)
                continue
            }
        }
    }

    /// One caller whose request has arrived: answered for its uid and its scope, or a refusal that
    /// sends it to the helper.
    private static func answer(_ caller: GateCallerQueue.Caller, overrides: TestOverrides, cache: GateDaemonCache,
                               environment: KeygateEnvironment) {
        let connection = caller.fd, uid = caller.uid, pid = caller.pid
        UnixSocket.setSendTimeout(connection, seconds: 1)
        let pidfd = UnixSocket.peerProcess(connection)
        defer { if pidfd >= 0 { Descriptor.close(pidfd) } }
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
            request.noPrompt = true
            let user = try cache.user(uid: uid)
            let server = GateServer(user: user, caller: pid, prompter: SilentPrompter(), pamConfdir: nil, overrides: overrides,
                                    environment: environment, cache: cache)
            result = .answer(try server.handle(request))
            // The scope was read from /proc/PID: it was the peer's only if the peer is still there.
            guard UnixSocket.processIsAlive(pidfd) else { return }
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
        FileSystem.linkTarget("/proc/self/exe")?.hasSuffix(" (deleted)") ?? false
    }

    // MARK: Start by the helper

    /// Called by the setuid helper after it served a request: when no daemon answers on the
    /// socket, and none holds the lock, starts one (root in full, as this helper already is, from a
    /// clean image). The one spawn door starts it (Spawn: posix_spawn, nothing of ours runs between
    /// the fork and the exec): a session of its own, /dev/null on 0-2, the listening socket on 3
    /// and the lock on 4, a fixed environment, the limits and nice value root's programs start with.
    static func startIfAbsent(hooks: [String: String], environment: KeygateEnvironment) {
        guard ProcessIdentity.uid == 0, ProcessIdentity.euid == 0, ResourceLimits.areRoots, !isListening(environment) else { return }
        do {
            try GatekeeperPaths.makeFolder(GatekeeperPaths.runRoot, mode: 0o711)
            FileSystem.changeMode(GatekeeperPaths.runRoot, 0o711)
            try GatekeeperPaths.makeFolder(GatekeeperPaths.socketFolder, mode: 0o755)
            FileSystem.changeMode(GatekeeperPaths.socketFolder, 0o755)
        } catch {
            return   // no folder, no daemon: the helper answers every call, as it did this one
        }
        let lock = SafeFile.openLockFile(GatekeeperPaths.daemonLockPath(environment))
        guard lock >= 0 else { return }
        defer { Descriptor.close(lock) }
        guard AdvisoryLock.tryExclusive(lock) == nil else { return }   // another daemon is starting or running
        guard let listener = UnixSocket.listening(at: GatekeeperPaths.socketPath(environment), mode: 0o666, backlog: 64) else { return }
        defer { Descriptor.close(listener) }
        // Copies above 4 first: the lock may itself be fd 3 (or the listener fd 4), and moving one onto 3
        // would close the other (the daemon then held no lock and two copies of its socket).
        let listenerCopy = Descriptor.duplicate(listener, lowest: 5), lockCopy = Descriptor.duplicate(lock, lowest: 5)
        defer { for fd in [listenerCopy, lockCopy] where fd >= 0 { Descriptor.close(fd) } }
        guard listenerCopy >= 0, lockCopy >= 0 else { return }
        var variables = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "LISTEN_FDS=1", "LISTEN_FDNAMES=" + selfStartedName]
        for (name, value) in hooks.sorted(by: { $0.key < $1.key }) { variables.append(name + "=" + value) }
        // This image (/proc/self/exe), named keygate-gatekeeper in its argv as a program started by name is.
        var spawn = Spawn(["keygate-gatekeeper", "--serve"])
        spawn.executable = "/proc/self/exe"
        spawn.environment = variables
        spawn.newSession = true
        spawn.descriptors = [0: .null, 1: .null, 2: .null, 3: .descriptor(listenerCopy), 4: .descriptor(lockCopy)]
        ResourceLimits.resetForAChild()
        // The daemon is left to run: this helper exits next, and the daemon (a new session, re-parented) is not waited for.
        _ = spawn.start()
    }

    /// True when something answers on the socket (a running daemon, or systemd's socket).
    private static func isListening(_ environment: KeygateEnvironment) -> Bool {
        let fd = UnixSocket.stream()
        guard fd >= 0 else { return false }
        defer { Descriptor.close(fd) }
        return UnixSocket.connect(fd, to: GatekeeperPaths.socketPath(environment))
    }
}
