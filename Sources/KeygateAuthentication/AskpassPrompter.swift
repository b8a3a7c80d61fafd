// Asks for a secret through an askpass program, with ssh-askpass and `sudo -A`
// semantics: PROG runs with the prompt as argv[1], stdin from /dev/null and stdout
// into a pipe; the answer is its output minus one trailing newline, and an exit
// status other than 0 means the person canceled. The secret never goes into argv or
// the environment. Delegates the child to Spawn; no Foundation Process.
import KeygateCore

struct AskpassPrompter: Prompter {
    /// The program, as given (a path, or a name looked up in PATH).
    let program: String
    /// The edge's environment: the search path, and the child's whole environment.
    let environment: KeygateEnvironment

    init(program: String, environment: KeygateEnvironment) {
        self.program = program
        self.environment = environment
    }

    func ensureAvailable() throws {
        _ = try resolvedProgram()
    }

    func notify(_ message: String) {
        Descriptor.write(message + "\n", to: 2)
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
        let searchPath = environment.executableSearchPath
        for folder in searchPath.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = folder + "/" + program
            if isExecutableFile(candidate) { return candidate }
        }
        throw notRunnable
    }

    private func isExecutableFile(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow), info.isRegular else { return false }
        return FileSystem.allows(.executable, path)
    }

    func readSecret(prompt: String) throws -> SecureBytes? {
        let path = try resolvedProgram()
        guard case .success(let pipe) = Descriptor.pipe() else {
            throw KeychainError.notAvailable("""
                cannot create a pipe for the askpass program (\(SystemErrno.current.text)): raise the open-file limit
                """)
        }
        // argv = [path, prompt], stdin /dev/null, stdout the pipe, stderr inherited (askpass programs report there).
        var spawn = Spawn([path, prompt])
        spawn.environment = environment.childEnvironment.map { "\($0.key)=\($0.value)" }.sorted()
        spawn.descriptors = [0: .null, 1: .descriptor(pipe.write.raw)]
        let child: Spawn.Child
        switch spawn.start() {
        case .success(let started): child = started
        case .failure(let e):
            throw KeychainError.interactionNotAllowed("""
                the askpass program '\(program)' could not be started (\(e.text)): fix KEYGATE_ASKPASS or --askpass, or run from a \
                terminal
                """)
        }
        pipe.write.close()
        let (buffer, overflow) = try readAll(fd: pipe.read.raw)
        let exit: Spawn.Exit
        switch child.wait() {
        case .success(let ended): exit = ended
        case .failure(let e):
            throw KeychainError.interactionNotAllowed(
                "lost track of the askpass program '\(program)' (\(e.text)): run from a terminal instead")
        }
        guard exit == .exited(0) else { return nil }  // canceled (non-zero exit or killed)
        if overflow {
            throw KeychainError.param("the askpass program printed more than \(PromptAdvice.maxAnswerBytes) bytes: use a shorter password")
        }
        if buffer.last == 0x0A { buffer.dropLast() }
        return try buffer.finish()
    }

    /// Everything the child prints, into locked memory. The second value is true when
    /// the output was longer than the buffer (the rest is read and dropped).
    private func readAll(fd: Int32) throws -> (SecretLineBuffer, Bool) {
        let buffer = try SecretLineBuffer()
        var overflow = false
        while true {
            if buffer.isFull {
                var scratch = [UInt8](repeating: 0, count: 256)
                let n = scratch.withUnsafeMutableBytes { raw in Descriptor.read(fd, into: raw.baseAddress, count: raw.count) }
                Sodium.wipe(&scratch)
                if n <= 0 { break }
                overflow = true
                continue
            }
            let n = buffer.fill { Descriptor.read(fd, into: $0, count: $1) }
            if n <= 0 { break }
        }
        return (buffer, overflow)
    }
}
