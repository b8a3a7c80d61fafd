// Asks for a secret through the user's pinentry (curses, GNOME, Qt …), speaking the
// Assuan protocol as gpg-agent does: spawn it on one end of a socket pair (its stdin
// and stdout), read the "OK" greeting, send OPTION ttyname/ttytype when there is a
// terminal and lc-ctype/lc-messages from the locale, then SETTITLE and SETDESC (each
// prompt kind its own dialog; a PAM prompt's reason), SETPROMPT, GETPIN; the answer comes back
// as "D <percent-encoded PIN>", decoded straight into locked memory; "ERR 83886179"
// means the person canceled. Writes use MSG_NOSIGNAL, so a pinentry that dies never
// kills the caller with SIGPIPE. Delegates to Spawn and SecretLineBuffer.
import KeygateCore

struct PinentryPrompter: Prompter {
    /// The program, as given (a path, or a name looked up in PATH).
    let program: String
    /// The edge's environment: the search path, the terminal and locale, and the child's whole
    /// environment (DISPLAY, WAYLAND_DISPLAY, TERM … come from there).
    let environment: KeygateEnvironment

    /// GPG_ERR_CANCELED in the pinentry's error source, as pinentry reports it.
    static let canceledCode = "83886179"
    /// Assuan's line limit, including the newline.
    static let maxLineBytes = 1000

    func ensureAvailable() throws {
        _ = try resolvedProgram()
    }

    func notify(_ message: String) {
        var bytes = Array((message + "\n").utf8)
        SafeFile.writeAll(2, bytes)
        bytes.removeAll()
    }

    func resolvedProgram() throws -> String {
        let notRunnable = KeychainError.interactionNotAllowed(
            """
                the pinentry program '\(program)' is not an executable file: install pinentry-curses (or -gnome3, -qt), fix \
                KEYGATE_PINENTRY, or drop --pinentry
                """)
        if program.contains("/") {
            guard Self.isExecutableFile(program) else { throw notRunnable }
            return program
        }
        let searchPath = environment.executableSearchPath
        for folder in searchPath.split(separator: ":", omittingEmptySubsequences: true) {
            let candidate = folder + "/" + program
            if Self.isExecutableFile(candidate) { return candidate }
        }
        throw notRunnable
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow), info.isRegular else { return false }
        return FileSystem.allows(.executable, path)
    }

    /// The PAM conversation's prompt "[keygate] REASON\nPassword for USER: " split into
    /// the description (REASON) and the prompt ("Password for USER:").
    static func split(_ prompt: String) -> (description: String?, prompt: String) {
        var text = prompt
        if text.hasPrefix("[keygate] ") { text.removeFirst("[keygate] ".count) }
        var description: String? = nil
        if let newline = text.lastIndex(of: "\n") {
            description = String(text[..<newline])
            text = String(text[text.index(after: newline)...])
        }
        while text.last == " " { text.removeLast() }
        if let first = text.first, first.isLowercase { text = first.uppercased() + text.dropFirst() }
        return (description, text.isEmpty ? "Password:" : text)
    }

    /// Assuan percent-escaping for a command's argument: %, CR, LF and other control bytes.
    static func escape(_ text: String) -> String {
        var out: [UInt8] = []
        for byte in text.utf8 {
            if byte == 0x25 || byte < 0x20 || byte == 0x7F {
                let hex = Array("0123456789ABCDEF".utf8)
                out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    func readSecret(prompt: String) throws -> SecureBytes? {
        let path = try resolvedProgram()
        let session = try Session(path: path, program: program, environment: environment)
        defer { session.finish() }
        try session.expectOK("greeting")
        for option in Self.options(environment: environment, terminal: Self.terminalName()) {
            try session.command("OPTION \(option)")
        }
        let dialog = Self.dialog(for: prompt)
        try session.command("SETTITLE \(Self.escape(dialog.title))")
        try session.command("SETDESC \(Self.escape(dialog.description))")
        try session.command("SETPROMPT \(Self.escape(dialog.prompt))")
        return try session.getPin()
    }

    /// What gpg-agent tells a pinentry about where it runs: the terminal and its type (for
    /// pinentry-curses), and the locale's character set and messages (without lc-ctype,
    /// pinentry-curses says "no LC_CTYPE known" and may not draw).
    static func options(environment: KeygateEnvironment, terminal: String?) -> [String] {
        var options: [String] = []
        if let terminal {
            options.append("ttyname=\(escape(terminal))")
            options.append("ttytype=\(escape(environment.terminalType))")
        }
        if let ctype = environment.characterLocale { options.append("lc-ctype=\(escape(ctype))") }
        if let messages = environment.messagesLocale { options.append("lc-messages=\(escape(messages))") }
        return options
    }

    /// The dialog for one of Keygate's prompts: its own title and description, so a person
    /// can tell the recovery key from a password and a new secret from either.
    static func dialog(for prompt: String) -> (title: String, description: String, prompt: String) {
        let (description, shown) = split(prompt)
        switch shown {
        case "Recovery key:":
            return ("Keygate: recovery key",
                    "Type the recovery key Keygate showed when your keychain was created (groups of four letters and digits).",
                    shown)
        case "Retype the secret:":
            return ("Keygate: new secret", "Type the same secret again, to check it.", shown)
        case _ where shown.hasPrefix("Secret for "):
            let item = shown.dropFirst("Secret for ".count).dropLast()
            return ("Keygate: new secret", "Type the secret to store for \(item).", shown)
        case _ where shown.containsText("(your previous password)"):
            return ("Keygate: previous password",
                    "Your login password changed. Type the password you had before, so the keychain can be re-wrapped.", shown)
        default:
            return ("Keygate", description ?? "Keygate needs your password.", shown)
        }
    }

    /// The controlling terminal's name, when keygate has one (what pinentry-curses draws on).
    static func terminalName() -> String? {
        for fd: Int32 in [0, 1, 2] where Terminal.isTerminal(fd) {
            if let name = Terminal.name(of: fd) { return name }
        }
        return nil
    }
}

/// One pinentry run: the child, our end of the socket pair, and its replies.
private final class Session {
    private let fd: Int32
    private let child: Spawn.Child
    private let program: String
    private var finished = false

    init(path: String, program: String, environment: KeygateEnvironment) throws {
        self.program = program
        let pair: [Int32]
        switch UnixSocket.pair() {
        case .success(let made): pair = [made.0, made.1]
        case .failure(let e):
            throw KeychainError.notAvailable("""
                cannot create a socket pair for pinentry (\(e.text)): raise the open-file limit
                """)
        }
        var spawn = Spawn([path])
        spawn.environment = environment.childEnvironment.map { "\($0.key)=\($0.value)" }.sorted()
        spawn.descriptors = [0: .descriptor(pair[1]), 1: .descriptor(pair[1])]
        let started = spawn.start()
        Descriptor.close(pair[1])
        switch started {
        case .success(let child): self.child = child
        case .failure(let e):
            Descriptor.close(pair[0])
            throw KeychainError.interactionNotAllowed(
                "the pinentry program '\(program)' could not be started (\(e.text)): fix KEYGATE_PINENTRY, or drop --pinentry")
        }
        fd = pair[0]
    }

    /// Sends one command and expects OK.
    func command(_ line: String) throws {
        try send(line)
        try expectOK(line.split(separator: " ").first.map(String.init) ?? line)
    }

    /// Reads replies up to OK; status and comment lines are skipped.
    func expectOK(_ what: String) throws {
        while true {
            let line = try readPlainLine()
            if line == "OK" || line.hasPrefix("OK ") { return }
            if line.hasPrefix("ERR ") {
                throw KeychainError.interactionNotAllowed("""
                    pinentry '\(program)' refused \(what): \(line.dropFirst(4)): check that it can reach your terminal or display
                    """)
            }
        }
    }

    /// GETPIN: the decoded PIN, nil when canceled.
    func getPin() throws -> SecureBytes? {
        try send("GETPIN")
        let pin = try SecretLineBuffer()
        while true {
            // Peek the first two bytes: "D " starts the data line, read straight into locked memory.
            let first = try readByte()
            if first == 0x44 /* D */ {
                let second = try readByte()
                if second == 0x20 {
                    try readData(into: pin)
                    continue
                }
                _ = try readPlainLine(prefix: [first, second])
                continue
            }
            let line = try readPlainLine(prefix: [first])
            if line == "OK" || line.hasPrefix("OK ") {
                return try pin.finish()
            }
            if line.hasPrefix("ERR ") {
                if line.dropFirst(4).hasPrefix(PinentryPrompter.canceledCode) { return nil }
                throw KeychainError.interactionNotAllowed("""
                    pinentry '\(program)' could not ask: \(line.dropFirst(4)): check that it can reach your terminal or display, or use \
                    --askpass
                    """)
            }
        }
    }

    /// Decodes the rest of a "D " line (%XX escapes) into `pin`, up to the newline.
    private func readData(into pin: SecretLineBuffer) throws {
        var overflow = false
        while true {
            var byte = try readByte()
            if byte == 0x0A { break }
            if byte == 0x25 {
                let high = try readByte(), low = try readByte()
                guard let h = Self.hexValue(high), let l = Self.hexValue(low) else {
                    throw KeychainError.decode("pinentry '\(program)' sent a malformed escape: use another pinentry")
                }
                byte = h << 4 | l
            }
            if !pin.append(byte) { overflow = true }
            byte = 0
        }
        if overflow {
            throw KeychainError.param("the answer is longer than \(PromptAdvice.maxAnswerBytes) bytes: use a shorter password")
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case 0x30...0x39: return c - 0x30
        case 0x41...0x46: return c - 0x41 + 10
        case 0x61...0x66: return c - 0x61 + 10
        default: return nil
        }
    }

    private func send(_ line: String) throws {
        var bytes = Array((line + "\n").utf8)
        defer { bytes.removeAll() }
        guard bytes.count <= PinentryPrompter.maxLineBytes else {
            throw KeychainError.param("the prompt text is too long for pinentry (\(bytes.count) bytes): shorten the reason")
        }
        if UnixSocket.sendAll(fd, bytes) != nil {
            throw KeychainError.interactionNotAllowed("""
                pinentry '\(program)' stopped listening: check that it works on its own (echo GETPIN | \(program))
                """)
        }
    }

    private func readByte() throws -> UInt8 {
        var byte: UInt8 = 0
        while true {
            let n = Descriptor.read(fd, into: &byte, count: 1)
            if n == 1 { return byte }
            throw KeychainError.interactionNotAllowed("""
                pinentry '\(program)' ended without answering: check that it works on its own, or use --askpass
                """)
        }
    }

    /// A line that holds no secret (OK, ERR, S, #), without its newline.
    private func readPlainLine(prefix: [UInt8] = []) throws -> String {
        var bytes = prefix
        if bytes.last == 0x0A { bytes.removeLast(); return String(decoding: bytes, as: UTF8.self) }
        while true {
            let byte = try readByte()
            if byte == 0x0A { break }
            if bytes.count < PinentryPrompter.maxLineBytes { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Says BYE, closes our end and reaps the child.
    func finish() {
        guard !finished else { return }
        finished = true
        try? send("BYE")
        Descriptor.close(fd)
        _ = child.wait()
    }

    deinit { finish() }
}
