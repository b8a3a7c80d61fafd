// What the thin module (pam_keygate.so, Sources/PAMKeygateModule) handed over for one PAM
// call: the phase, the flags, the PAM items (user, service, tty), the module options and
// the typed passwords, read from standard input (a pipe; never argv or the environment).
// The passwords go straight into locked memory (SecureBytes), zeroed when released.
// The format (docs/DECISIONS.md, "pam_keygate in real logins"), written by the module:
//   keygate-pam 1\n
//   phase auth|open|close|passwd\n  flags N\n  user NAME\n  service NAME\n  tty TEXT\n
//   arg OPTION\n ...
//   authtok N\n<N bytes>  oldauthtok N\n<N bytes>   (each optional)
//   end\n
// Lines the helper writes back (ModuleLog, `info`) go to standard output for the
// module to pass to pam_syslog(3) and pam_info(3).
import KeygateCore

final class ModuleHandle {
    var phase = ""
    var flags: Int32 = 0
    var userName: String?
    var serviceName = "?"
    var ttyName: String?
    var arguments: [String] = []
    private var authtok: SecureBytes?
    private var oldAuthtok: SecureBytes?

    /// PAM itself refuses longer passwords (PAM_MAX_RESP_SIZE is 512).
    static let maxPasswordBytes = 4096
    /// A request is a few lines and two passwords at most.
    static let maxRequestBytes = 64 * 1024

    /// Reads and parses the request on standard input.
    static func readRequest() throws -> ModuleHandle {
        let buffer = try SecureBytes(count: maxRequestBytes)
        let count = try buffer.withUnsafeMutableBytes { raw in
            switch SafeFile.readFully(0, into: raw) {
            case .success(let count): return count
            case .failure(let e): throw ModuleError("cannot read the request from pam_keygate.so: \(e.text)")
            }
        }
        return try buffer.withUnsafeBytes { raw in try parse(UnsafeRawBufferPointer(rebasing: raw[0..<count])) }
    }

    /// Parses a request; the password bytes are copied into locked memory only.
    static func parse(_ bytes: UnsafeRawBufferPointer) throws -> ModuleHandle {
        let handle = ModuleHandle()
        var index = 0
        // Bytes by index, not Slices and split(separator:): their generic metadata was a tenth of
        // a millisecond of every login.
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        func lineEnd() throws -> Int {
            var end = index
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            guard end < bytes.count else { throw ModuleError("the request from pam_keygate.so is cut short") }
            return end
        }
        func line() throws -> String {
            let end = try lineEnd()
            defer { index = end + 1 }
            return text(index..<end)
        }
        /// The next line as its first word and the rest after the first space (nil when there is none).
        func field() throws -> (key: String, value: String?) {
            let end = try lineEnd()
            defer { index = end + 1 }
            var space = index
            while space < end, bytes[space] != 0x20 { space += 1 }
            return (text(index..<space), space < end ? text((space + 1)..<end) : nil)
        }
        func secret(_ length: String) throws -> SecureBytes? {
            guard let n = Int(length), n >= 0, n <= maxPasswordBytes, index + n <= bytes.count else {
                throw ModuleError("the request from pam_keygate.so has a bad password length")
            }
            defer { index += n }
            return n == 0 ? nil : try SecureBytes(copying: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + n)]))
        }
        guard try line() == "keygate-pam 1" else { throw ModuleError("the request does not come from a matching pam_keygate.so (reinstall keygate)") }
        while true {
            let (key, valueIfAny) = try field()
            if key == "end", valueIfAny == nil { return handle }
            let value = valueIfAny ?? ""
            switch key {
            case "phase": handle.phase = value
            case "flags": handle.flags = Int32(value) ?? 0
            case "user": handle.userName = value
            case "service": handle.serviceName = value
            case "tty": handle.ttyName = value.isEmpty ? nil : value
            case "arg": handle.arguments.append(value)
            case "authtok": handle.authtok = try secret(value)
            case "oldauthtok": handle.oldAuthtok = try secret(value)
            default: throw ModuleError("the request from pam_keygate.so has an unknown field '\(key)'")
            }
        }
    }

    /// PAM_USER, as set by the application or an earlier module (never prompted for).
    func user() -> String? { userName }

    /// PAM_TTY: the terminal ("/dev/pts/3", "tty1"), sshd's "ssh", an X display (":0"), or what a
    /// service without one sets ("cron"); nil when unset.
    func tty() -> String? { ttyName }

    /// A session a person logs in to (a terminal, ssh, a display), not a job (cron, a service).
    func isInteractiveSession() -> Bool {
        guard let tty = tty() else { return false }
        return tty.hasPrefix("/dev/") || tty.hasPrefix("tty") || tty.hasPrefix("pts/") || tty == "ssh" || tty.hasPrefix(":")
    }

    /// PAM_SERVICE, for log lines.
    func service() -> String { serviceName }

    /// PAM_AUTHTOK or PAM_OLDAUTHTOK as an earlier module (pam_unix) left it, in locked
    /// memory; nil when unset or empty. The module never prompts.
    func password(_ which: Int32) throws -> SecureBytes? {
        which == PAMItem.oldAuthtok ? oldAuthtok : authtok
    }

    /// One PAM_TEXT_INFO line, passed to pam_info(3) by the module: never a secret.
    func info(_ text: String) {
        HelperOutput.write("info " + HelperOutput.oneLine(text))
    }
}

/// The PAM item numbers the helper names (security/_pam_types.h).
enum PAMItem {
    static let authtok: Int32 = 6
    static let oldAuthtok: Int32 = 7
}

/// Standard output, one line per write(2), for the module to read.
enum HelperOutput {
    static func write(_ line: String) {
        SafeFile.writeAll(1, Array((line + "\n").utf8))
    }

    /// No line breaks inside a line (every CR and LF byte a space, a CRLF pair too, which
    /// one Character holds); bounded to 2000 characters. Bytes, not Characters: mapping the
    /// Characters of every log line cost the helper 0.3 M instructions of grapheme breaking.
    static func oneLine(_ text: String) -> String {
        var bytes = Array(text.utf8)
        for index in bytes.indices where bytes[index] == 0x0A || bytes[index] == 0x0D { bytes[index] = 0x20 }
        let flat = String(decoding: bytes, as: UTF8.self)
        return bytes.count <= 2000 ? flat : String(flat.prefix(2000))
    }
}
