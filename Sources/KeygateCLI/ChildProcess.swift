// Spawns the command of `keygate exec` with its secrets and waits for it. Pipes are
// filled BEFORE the spawn (a secret is at most 64 KiB; the pipe is grown to hold it),
// so no write can block on a child that never reads and no SIGPIPE can hit keygate.
// The environment entries holding secrets live in mlock'd memory wiped after the
// spawn. posix_spawnp, no shell; SIGINT/SIGQUIT are ignored while waiting (as
// system(3) does) and reset to their defaults in the child.
import Glibc
import Keygate

enum ChildProcess {
    /// Pipe ends are kept at or above this number, so the dup2s onto the requested
    /// descriptors (3-99) can never clobber one another.
    static let firstPrivateFD: Int32 = 100

    /// `secrets` is emptied once they are in the child's pipes and environment, so no
    /// copy stays in keygate's memory while it waits (LeakTests dumps it to check).
    /// `command` is argv for the child, as bytes (they need not be UTF-8).
    static func run(_ command: [[UInt8]], secrets: inout [(ExecCommand.Request, SecureBytes)],
                    environment: [String: String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var readEnds: [Int32] = []
        defer { for fd in readEnds { close(fd) } }

        var secretEntries: [String: SecureEnvEntry] = [:]
        for (request, secret) in secrets {
            switch request.destination {
            case .environment(let name):
                secretEntries[name] = try SecureEnvEntry(name: name, secret: secret)
            case .standardInput, .descriptor:
                let fd = try filledPipe(secret)
                readEnds.append(fd)
                let target: Int32
                if case .descriptor(let n) = request.destination { target = n } else { target = 0 }
                posix_spawn_file_actions_adddup2(&actions, fd, target)  // dup2 clears FD_CLOEXEC on target
            }
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGQUIT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let argv = CStringArray(bytes: command)
        let commandName = String(decoding: command.first ?? [], as: UTF8.self)
        guard let program = argv.pointers[0] else {
            throw KeychainError(.param, "exec needs a command after --")
        }
        let plain = environment.filter { secretEntries[$0.key] == nil }.map { "\($0.key)=\($0.value)" }.sorted()
        let envStrings = CStringArray(plain)
        var envp: [UnsafeMutablePointer<CChar>?] = Array(UnsafeBufferPointer(start: envStrings.pointers, count: plain.count))
        envp += secretEntries.values.map { Optional($0.pointer) }
        envp.append(nil)

        let oldInt = signal(SIGINT, SIG_IGN)
        let oldQuit = signal(SIGQUIT, SIG_IGN)
        defer { signal(SIGINT, oldInt); signal(SIGQUIT, oldQuit) }

        var pid: pid_t = 0
        let rc = envp.withUnsafeMutableBufferPointer { envBuffer in
            posix_spawnp(&pid, program, &actions, &attributes, argv.pointers, envBuffer.baseAddress)
        }
        secretEntries.removeAll()  // wipes the environment copies
        secrets.removeAll()        // and the secrets themselves (SecureBytes zero on free)
        for fd in readEnds { close(fd) }
        readEnds.removeAll()
        guard rc == 0 else {
            Console.err("keygate: cannot run '\(commandName)': \(String(cString: strerror(rc))): check the command name and PATH\n")
            return 127
        }
        var status: Int32 = 0
        if SafeFile.retryingOnEINTR({ waitpid(pid, &status, 0) }) < 0 {
            throw KeychainError(.notAvailable, "lost track of '\(commandName)' (\(String(cString: strerror(errno)))): check whether it finished")
        }
        // WIFSIGNALED / WTERMSIG / WEXITSTATUS are macros: decode by hand.
        let signal = status & 0x7F
        return signal != 0 ? 128 + signal : (status >> 8) & 0xFF
    }

    /// A close-on-exec pipe holding the whole secret, its write end closed; returns the
    /// read end, moved to a descriptor >= firstPrivateFD.
    private static func filledPipe(_ secret: SecureBytes) throws -> Int32 {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw KeychainError(.notAvailable, "cannot create a pipe (\(String(cString: strerror(errno)))): raise the open-file limit")
        }
        let readFD = fcntl(fds[0], F_DUPFD_CLOEXEC, firstPrivateFD)
        close(fds[0])
        defer { close(fds[1]) }
        guard readFD >= 0 else {
            throw KeychainError(.notAvailable, "cannot move a pipe descriptor (\(String(cString: strerror(errno)))): raise the open-file limit")
        }
        if secret.count >= 65536 {
            _ = fcntl(fds[1], 1031 /* F_SETPIPE_SZ */, Int32(secret.count + 4096))
        }
        do {
            try secret.write(toFileDescriptor: fds[1])
        } catch {
            close(readFD)
            throw KeychainError(.notAvailable, "cannot hand the secret to the command through a pipe: the secret is larger than the pipe; use --env")
        }
        return readFD
    }
}

/// "NAME=secret\0" in mlock'd memory, wiped and freed in deinit.
private final class SecureEnvEntry {
    let pointer: UnsafeMutablePointer<CChar>
    private let size: Int

    init(name: String, secret: SecureBytes) throws {
        let hasNUL = secret.withUnsafeBytes { $0.contains(0) }
        if hasNUL {
            throw KeychainError(.param, "the secret for \(name) contains a NUL byte, which an environment variable cannot hold: use --stdin or --fd")
        }
        let prefix = Array((name + "=").utf8)
        size = prefix.count + secret.count + 1
        pointer = .allocate(capacity: size)
        _ = mlock(pointer, size)
        let raw = UnsafeMutableRawPointer(pointer)
        prefix.withUnsafeBytes { if let base = $0.baseAddress { raw.copyMemory(from: base, byteCount: $0.count) } }
        secret.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { (raw + prefix.count).copyMemory(from: base, byteCount: bytes.count) }
        }
        raw.storeBytes(of: 0, toByteOffset: size - 1, as: UInt8.self)
    }

    deinit {
        explicit_bzero(pointer, size)
        munlock(pointer, size)
        pointer.deallocate()
    }
}
