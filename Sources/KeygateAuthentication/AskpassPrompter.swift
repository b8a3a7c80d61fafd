// Asks for a secret through an askpass program, with ssh-askpass and `sudo -A`
// semantics: PROG runs with the prompt as argv[1], stdin from /dev/null and stdout
// into a pipe; the answer is its output minus one trailing newline, and an exit
// status other than 0 means the person canceled. The secret never goes into argv or
// the environment. Delegates to posix_spawn(3); no Foundation Process.
import KeygateCore
internal import Glibc

struct AskpassPrompter: Prompter {
    /// The program, as given (a path, or a name looked up in PATH).
    let program: String
    /// The child's whole environment (normally the process environment).
    let environment: [String: String]

    init(program: String, environment: [String: String]) {
        self.program = program
        self.environment = environment
    }

    func ensureAvailable() throws {
        _ = try resolvedProgram()
    }

    func notify(_ message: String) {
        writeAll(2, message + "\n")
    }

    /// The absolute path of `program`, or an error naming it.
    func resolvedProgram() throws -> String {
        let notRunnable = KeychainError.interactionNotAllowed(
            "the askpass program '\(program)' is not an executable file: fix KEYGATE_ASKPASS or --askpass, or run from a terminal")
        if program.isEmpty { throw KeychainError.interactionNotAllowed(PromptAdvice.noPrompt) }
        if program.contains("/") {
            guard isExecutableFile(program) else { throw notRunnable }
            return program
        }
        let searchPath = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in searchPath.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = folder + "/" + program
            if isExecutableFile(candidate) { return candidate }
        }
        throw notRunnable
    }

    private func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    func readSecret(prompt: String) throws -> SecureBytes? {
        let path = try resolvedProgram()
        let pipe = try OutputPipe()
        let pid = try spawn(path: path, prompt: prompt, stdoutFD: pipe.writeFD)
        pipe.closeWriteEnd()
        let (buffer, overflow) = try readAll(fd: pipe.readFD)
        let status = try waitFor(pid)
        guard status == 0 else { return nil }  // canceled (non-zero exit or killed)
        if overflow {
            throw KeychainError.param("the askpass program printed more than \(PromptAdvice.maxAnswerBytes) bytes: use a shorter password")
        }
        if buffer.last == 0x0A { buffer.dropLast() }
        return try buffer.finish()
    }

    /// Starts the program: argv = [path, prompt], stdin /dev/null, stdout the pipe,
    /// stderr inherited (askpass programs report there).
    private func spawn(path: String, prompt: String, stdoutFD: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutFD, 1)  // dup2 clears FD_CLOEXEC on 1

        let argv = CStringArray([path, prompt])
        let envp = CStringArray(environment.map { "\($0.key)=\($0.value)" }.sorted())
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv.pointers, envp.pointers)
        guard rc == 0 else {
            throw KeychainError.interactionNotAllowed(
                """
                    the askpass program '\(program)' could not be started (\(String(cString: strerror(rc)))): fix KEYGATE_ASKPASS or \
                    --askpass, or run from a terminal
                    """)
        }
        return pid
    }

    /// Everything the child prints, into locked memory. The second value is true when
    /// the output was longer than the buffer (the rest is read and dropped).
    private func readAll(fd: Int32) throws -> (SecretLineBuffer, Bool) {
        let buffer = try SecretLineBuffer()
        var overflow = false
        while true {
            if buffer.isFull {
                var scratch = [UInt8](repeating: 0, count: 256)
                let n = SafeFile.retryingOnEINTR { scratch.withUnsafeMutableBytes { raw in read(fd, raw.baseAddress, raw.count) } }
                Sodium.wipe(&scratch)
                if n <= 0 { break }
                overflow = true
                continue
            }
            let n = SafeFile.retryingOnEINTR { buffer.fill { read(fd, $0, $1) } }
            if n <= 0 { break }
        }
        return (buffer, overflow)
    }

    /// Waits for the child; its exit status, or -1 when a signal ended it.
    private func waitFor(_ pid: pid_t) throws -> Int32 {
        var status: Int32 = 0
        if SafeFile.retryingOnEINTR({ waitpid(pid, &status, 0) }) < 0 {
            throw KeychainError.interactionNotAllowed(
                "lost track of the askpass program '\(program)' (\(String(cString: strerror(errno)))): run from a terminal instead")
        }
        // WIFEXITED / WEXITSTATUS are macros: decode by hand.
        let terminatedBySignal = (status & 0x7F) != 0
        return terminatedBySignal ? -1 : (status >> 8) & 0xFF
    }
}

/// A pipe whose ends are close-on-exec and never 0, 1 or 2 (so dup2 onto 1 is always a
/// real copy). The owner of the two descriptors; deinit closes what is still open.
private final class OutputPipe {
    private(set) var readFD: Int32 = -1
    private(set) var writeFD: Int32 = -1

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else {
            throw KeychainError.notAvailable("""
                cannot create a pipe for the askpass program (\(String(cString: strerror(errno)))): raise the open-file limit
                """)
        }
        // pipe2 is not visible from Swift: move both ends to close-on-exec copies at once.
        readFD = Self.closeOnExecCopy(fds[0])
        writeFD = Self.closeOnExecCopy(fds[1])
        guard readFD >= 0, writeFD >= 0 else {
            throw KeychainError.notAvailable("cannot create a pipe for the askpass program: raise the open-file limit")
        }
    }

    private static func closeOnExecCopy(_ fd: Int32) -> Int32 {
        let moved = fcntl(fd, F_DUPFD_CLOEXEC, Int32(3))
        close(fd)
        return moved
    }

    func closeWriteEnd() {
        if writeFD >= 0 { close(writeFD) }
        writeFD = -1
    }

    deinit {
        if readFD >= 0 { close(readFD) }
        if writeFD >= 0 { close(writeFD) }
    }
}
