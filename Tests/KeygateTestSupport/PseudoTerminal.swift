// A pseudo-terminal for tests that type at a program the way a person at a shell
// does. openpty(3) makes the pair; the program is spawned (posix_spawn) as the
// leader of a new session and opens the slave side as its controlling terminal, so
// /dev/tty, job control, Ctrl-C and Ctrl-Z all work as on a real terminal. The test
// reads what the person would see from the master side and types into it.
import Foundation
import Glibc

public struct PseudoTerminalError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

public final class PseudoTerminal: @unchecked Sendable {
    /// The spawned program's pid: the session leader of the terminal.
    public let pid: pid_t
    /// The slave side's path (/dev/pts/N), for `stty -a <` style checks.
    public let ttyPath: String

    private let master: Int32
    private var received: [UInt8] = []
    /// `received` normalized (see `normalize`), and where the next `expect` starts looking in it.
    private var shown: [UInt8] = []
    private var mark = 0
    private var hungUp = false
    private var exitStatus: Int32?

    /// Ctrl-C, Ctrl-D and Ctrl-Z as the terminal's line discipline reads them.
    public static let interrupt = "\u{03}"
    public static let endOfFile = "\u{04}"
    public static let suspend = "\u{1A}"

    /// Spawns `argv` (argv[0] a path) on a new terminal of `columns` x `rows`.
    public init(_ argv: [String], environment: [String: String], columns: UInt16 = 200, rows: UInt16 = 50) throws {
        var masterFD: Int32 = -1
        var slaveFD: Int32 = -1
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        var name = [CChar](repeating: 0, count: 128)
        guard openpty(&masterFD, &slaveFD, &name, nil, &size) == 0 else {
            throw PseudoTerminalError(description: "openpty failed: \(String(cString: strerror(errno)))")
        }
        _ = fcntl(masterFD, F_SETFD, FD_CLOEXEC)
        let path = String(cString: name)
        defer { close(slaveFD) }  // the child opens the slave by its path, as its controlling terminal

        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        // A new session first (glibc runs setsid before the file actions), so opening the
        // slave without O_NOCTTY makes it the controlling terminal.
        let setsid: Int16 = 0x80  // POSIX_SPAWN_SETSID (glibc 2.26), not imported into Swift
        var defaults = sigset_t()
        var empty = sigset_t()
        sigfillset(&defaults)
        sigemptyset(&empty)
        posix_spawnattr_setflags(&attributes, setsid | Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawn_file_actions_addopen(&actions, 0, path, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)

        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = environment.keys.sorted().map { strdup("\($0)=\(environment[$0] ?? "")") } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var child: pid_t = 0
        let status = posix_spawn(&child, argv[0], &actions, &attributes, cArgs, cEnv)
        guard status == 0 else {
            close(masterFD)
            throw PseudoTerminalError(description: "posix_spawn \(argv[0]) failed: \(String(cString: strerror(status)))")
        }
        pid = child
        master = masterFD
        ttyPath = path
    }

    deinit { terminate() }

    /// Everything the terminal showed so far, without carriage returns and escape sequences.
    public var screen: String { Self.normalize(received[...]) }

    /// True while the terminal echoes what is typed (tcgetattr on the master side reports the
    /// slave's settings on Linux).
    public var echoIsOn: Bool {
        var settings = termios()
        guard tcgetattr(master, &settings) == 0 else { return false }
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Waits until echo is `on` (or off), reading the terminal meanwhile. A program that turns echo
    /// off with TCSAFLUSH discards what was typed before, so a test types a password only after this.
    public func waitForEcho(on: Bool, timeout: TimeInterval = 30) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while echoIsOn != on {
            if hungUp || Date() >= deadline {
                throw PseudoTerminalError(description: "echo did not turn \(on ? "on" : "off") within \(timeout) s; the screen:\n\(screen)")
            }
            pump(until: min(deadline, Date().addingTimeInterval(0.01)))
        }
    }

    /// Types `text` (no Enter).
    public func type(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(master, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            offset += n
        }
        bytes.removeAll()
    }

    /// Types `text` and presses Enter (a carriage return, as a keyboard sends it).
    public func typeLine(_ text: String) { type(text + "\r") }

    /// Waits until `text` appears on the normalized screen after what earlier calls consumed, and
    /// returns the screen from there to the end of `text`. Throws, with the whole screen, on
    /// timeout or when the terminal hangs up first.
    @discardableResult
    public func expect(_ text: String, timeout: TimeInterval = 60) throws -> String {
        try expect(anyOf: [text], timeout: timeout).seen
    }

    /// As `expect`, for whichever of `texts` appears first; returns its index too.
    public func expect(anyOf texts: [String], timeout: TimeInterval = 60) throws -> (index: Int, seen: String) {
        let needles = texts.map { Array($0.utf8) }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let matches = needles.enumerated().compactMap { index, needle in find(needle).map { (index, $0) } }
            if let (index, range) = matches.min(by: { $0.1.lowerBound < $1.1.lowerBound }) {
                let seen = String(decoding: shown[mark..<range.upperBound], as: UTF8.self)
                mark = range.upperBound
                return (index, seen)
            }
            if hungUp || Date() >= deadline {
                let what = texts.map { "'\($0)'" }.joined(separator: " or ")
                throw PseudoTerminalError(description: "\(what) did not appear \(hungUp ? "before the terminal closed" : "within \(timeout) s"); the screen:\n\(screen)")
            }
            pump(until: deadline)
        }
    }

    /// Waits for the spawned program to exit (reading the terminal meanwhile) and returns its
    /// wait status. Kills it on timeout and throws.
    @discardableResult
    public func waitForExit(timeout: TimeInterval = 60) throws -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while exitStatus == nil {
            var status: Int32 = 0
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { exitStatus = status; break }
            if r < 0 && errno != EINTR { exitStatus = -1; break }
            if Date() >= deadline {
                terminate()
                throw PseudoTerminalError(description: "the program did not exit within \(timeout) s; the screen:\n\(screen)")
            }
            pump(until: min(deadline, Date().addingTimeInterval(0.05)))
        }
        while !hungUp && pump(until: Date().addingTimeInterval(0.05)) {}
        return exitStatus ?? -1
    }

    /// Kills the terminal's session and reaps the program. Safe to call twice.
    public func terminate() {
        if exitStatus == nil {
            kill(-pid, SIGKILL)
            kill(pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exitStatus = status
        }
        if !hungUp {
            hungUp = true
            close(master)
        }
    }

    // MARK: reading

    /// Reads what is there (waiting at most until `deadline`). False when nothing came.
    @discardableResult
    private func pump(until deadline: Date) -> Bool {
        guard !hungUp else { return false }
        let milliseconds = Int32(max(0, min(1_000, deadline.timeIntervalSinceNow * 1_000)))
        var fds = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
        let ready = poll(&fds, 1, milliseconds)
        guard ready > 0 else { return false }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress!, $0.count) }
        if n > 0 {
            received += buffer[0..<n]
            shown = Array(Self.normalize(received[...]).utf8)
            return true
        }
        if n < 0 && errno == EINTR { return true }
        // EIO: every process has closed the slave side.
        hungUp = true
        close(master)
        return false
    }

    private func find(_ needle: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, shown.count - mark >= needle.count else { return nil }
        var start = mark
        while start + needle.count <= shown.count {
            if shown[start..<(start + needle.count)].elementsEqual(needle) { return start..<(start + needle.count) }
            start += 1
        }
        return nil
    }

    /// Drops carriage returns, CSI sequences (ESC [ … final byte) and OSC sequences (ESC ] … BEL),
    /// so screens compare as text.
    public static func normalize(_ bytes: ArraySlice<UInt8>) -> String {
        var out: [UInt8] = []
        var i = bytes.startIndex
        while i < bytes.endIndex {
            let byte = bytes[i]
            if byte == 0x1B, i + 1 < bytes.endIndex {
                let next = bytes[i + 1]
                i += 2
                if next == UInt8(ascii: "[") {
                    while i < bytes.endIndex, !(0x40...0x7E).contains(bytes[i]) { i += 1 }
                    i += 1
                } else if next == UInt8(ascii: "]") {
                    while i < bytes.endIndex, bytes[i] != 0x07 { i += 1 }
                    i += 1
                }
                continue
            }
            if byte != 0x0D { out.append(byte) }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
