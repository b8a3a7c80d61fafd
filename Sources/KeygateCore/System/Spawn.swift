// Starting a program and waiting for it, the one way Keygate does it (askpass, pinentry, the
// gatekeeper, `keygate exec`'s command, ssh-keygen): posix_spawn(3), no shell, no fork of a
// threaded process. The child gets exactly the descriptors named here (each dup2'd onto its
// number, which clears close-on-exec there); everything Keygate opened itself is close-on-exec
// (Descriptor.pipe, SafeFile) and does not reach it. Exit statuses are decoded here once.
internal import CSystem
internal import Glibc

package struct Spawn {
    /// What one of the child's descriptors is.
    package enum Stream {
        /// This process's own (the child shares it).
        case inherit
        /// /dev/null, opened for reading (0) or writing (1, 2 and others).
        case null
        /// A copy of this descriptor of ours.
        case descriptor(Int32)
    }

    /// argv; the first entry is the program (a path, or a name looked up in PATH with `searchPath`).
    package var arguments: [[UInt8]]
    /// "NAME=value" entries; nil: this process's environment.
    package var environment: [String]? = nil
    /// Entries the caller keeps in memory of its own (secrets in locked memory), after `environment`'s.
    package var environmentEntries: [UnsafeMutablePointer<CChar>] = []
    package var searchPath = false
    /// The file to execute when it is not `arguments[0]` (which is then only the name the child sees).
    package var executable: String? = nil
    /// The child's descriptors beyond inheriting: 0, 1, 2 or any other number.
    package var descriptors: [Int32: Stream] = [:]
    /// Signals the child starts with at their default action (this process may ignore them).
    package var defaultSignals: [Int32] = []
    /// The child starts a session of its own (setsid(2), POSIX_SPAWN_SETSID): no terminal, and out
    /// of reach of the caller's job control.
    package var newSession = false

    package init(_ arguments: [String]) { self.arguments = arguments.map { Array($0.utf8) } }

    package init(bytes arguments: [[UInt8]]) { self.arguments = arguments }

    /// The child's exit: its status, or the signal that ended it.
    package enum Exit: Sendable, Equatable {
        case exited(Int32)
        case signaled(Int32)

        /// As a shell reports it: the status, or 128 plus the signal.
        package var shellStatus: Int32 {
            switch self {
            case .exited(let status): return status
            case .signaled(let signal): return 128 + signal
            }
        }

        /// WIFEXITED, WEXITSTATUS and WTERMSIG are macros: decoded by hand.
        init(waitStatus status: Int32) {
            let signal = status & 0x7F
            self = signal != 0 ? .signaled(signal) : .exited((status >> 8) & 0xFF)
        }
    }

    /// A started child, waited for once.
    package struct Child: Sendable {
        package let pid: Int32

        /// Waits for the child to end.
        package func wait() -> Result<Exit, SystemErrno> {
            var status: Int32 = 0
            guard SafeFile.retryingOnEINTR({ waitpid(pid, &status, 0) }) >= 0 else { return .failure(.current) }
            return .success(Exit(waitStatus: status))
        }

        /// Sends SIGKILL (kill(2)); nil when sent, else why not (ESRCH: no such process, or one
        /// this process may not signal, such as a setuid child).
        package func kill() -> SystemErrno? {
            Glibc.kill(pid, SIGKILL) == 0 ? nil : .current
        }

        /// Collects the child only if it has already ended (a child left to its own end is not waited for).
        package func collectIfEnded() {
            var status: Int32 = 0
            _ = SafeFile.retryingOnEINTR { waitpid(pid, &status, WNOHANG) }
        }
    }

    /// Starts the program; the error is posix_spawn's (ENOENT for a missing program).
    package func start() -> Result<Child, SystemErrno> {
        guard !arguments.isEmpty, !arguments[0].isEmpty else { return .failure(SystemErrno(code: ENOENT)) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in descriptors.sorted(by: { $0.key < $1.key }) {
            switch stream {
            case .inherit: break
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let source): posix_spawn_file_actions_adddup2(&actions, source, target)
            }
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags: Int32 = 0
        if !defaultSignals.isEmpty {
            var set = sigset_t()
            sigemptyset(&set)
            for signal in defaultSignals { sigaddset(&set, signal) }
            posix_spawnattr_setsigdefault(&attributes, &set)
            flags |= Int32(POSIX_SPAWN_SETSIGDEF)
        }
        if newSession { flags |= keygate_spawn_setsid_flag() }
        if flags != 0 { posix_spawnattr_setflags(&attributes, Int16(flags)) }
        let argv = CStringArray(bytes: arguments)
        let listed = environment.map { CStringArray($0) }
        var envp: [UnsafeMutablePointer<CChar>?] = []
        if let environment, let listed {
            envp = Array(UnsafeBufferPointer(start: listed.pointers, count: environment.count))
        } else {
            var entry = environ
            while let pointer = entry.pointee {
                envp.append(pointer)
                entry += 1
            }
        }
        envp += environmentEntries.map { Optional($0) }
        envp.append(nil)
        var pid: pid_t = 0
        let rc = envp.withUnsafeMutableBufferPointer { envBuffer -> Int32 in
            if let executable {
                return posix_spawn(&pid, executable, &actions, &attributes, argv.pointers, envBuffer.baseAddress)
            }
            guard let program = argv.pointers[0] else { return ENOENT }
            return searchPath
                ? posix_spawnp(&pid, program, &actions, &attributes, argv.pointers, envBuffer.baseAddress)
                : posix_spawn(&pid, program, &actions, &attributes, argv.pointers, envBuffer.baseAddress)
        }
        withExtendedLifetime(listed) {}
        guard rc == 0 else { return .failure(SystemErrno(code: rc)) }
        return .success(Child(pid: pid))
    }
}
