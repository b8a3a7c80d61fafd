// The gatekeeper's own audit record (docs/GATEKEEPER.md, "The audit record"): every decision
// the gatekeeper makes, one line each, appended by root whatever syslog does. syslog(3) drops
// a line without a word when nothing listens on /dev/log (containers, minimal hosts), and the
// caller's own audit lines are written by a process of the user, which could leave them out;
// this record is neither. The folder is root's, 0700, each file root's, 0600, opened with
// O_APPEND, so no user reads, writes, truncates, renames or replaces it.
// Bounded per user: each uid's decisions go to a file of its own (users/UID.log), rotated past
// `userMaxBytes` to UID.log.1, so one user's flood only ever rotates that user's own lines.
// pam_keygate's helper keeps its log lines in gatekeeper.log (`appendModuleLine`, `source=
// pam_keygate`), rotated past `maxBytes`. Every line is short: a value longer than
// `maxValueBytes` is cut, marked, and followed by a hash of the whole; and ASCII only: every
// other character is escaped (`\u{202E}`), so no display or splitter takes a line for two or
// reads it reversed. Best effort: a full disk loses a line, never a decision. Test-hook builds
// with KEYGATE_TEST_GATE_DIR write below it.
//
// A line: `2026-12-06T05:10:03Z uid=1001 user=alice op=open result=granted basis=window
// scope=tty.34816.1201.5521 pam-service=keygate service=signing account=release pid=4242`;
// never a secret (there is no field for one).
import KeygateCore
import KeygateGateWire

package enum GateAuditFile {
    static func folder(_ environment: KeygateEnvironment) -> String { GatekeeperPaths.auditFolder(environment) }
    static func path(_ environment: KeygateEnvironment) -> String { GatekeeperPaths.auditPath(environment) }
    static func previousPath(_ environment: KeygateEnvironment) -> String { path(environment) + ".1" }
    static func userPath(uid: UInt32, _ environment: KeygateEnvironment) -> String {
        GatekeeperPaths.auditUserPath(uid: uid, environment)
    }

    /// Past this size pam_keygate's file is rotated: it holds at most twice this.
    static let maxBytes = 1 << 20
    /// Past this size a user's file is rotated: a user's record holds at most twice this.
    static let userMaxBytes = 256 << 10
    /// The longest value written whole (escapes counted); a longer one is cut and marked.
    static let maxValueBytes = 96

    /// One line: the time (UTC), then `fields` in order, each `name=value` (quoted when needed).
    static func line(_ fields: [(String, String?)], time: Int = WallClock.seconds) -> String {
        var out = timestamp(time)
        for (name, value) in fields {
            guard let value else { continue }
            out += " " + name + "=" + field(value)
        }
        return out + "\n"
    }

    /// A value as the record writes it: ASCII only, quoted when it holds a space, `=`, a quote, a
    /// backslash or an escape; control characters as `\xHH`, every non-ASCII character as `\u{HEX}`
    /// (U+2028, U+202E, a no-break space, a fullwidth `＝` are shown, never obeyed). Past
    /// `maxValueBytes` the value is cut and `...[cut: N bytes, blake2b XXXXXXXXXXXXXXXX]` follows:
    /// its length and a hash of the whole, so two long names that share a beginning still differ.
    static func field(_ value: String) -> String {
        var body = ""
        var quoted = value.isEmpty
        var cut = false
        scan: for scalar in value.unicodeScalars {
            let piece: String
            switch scalar.value {
            case 0x22: piece = "\\\""
            case 0x5C: piece = "\\\\"
            case 0x20, 0x3D: piece = String(scalar)
            case 0..<0x20, 0x7F: piece = "\\x" + hex(scalar.value, digits: 2)
            case 0x80...: piece = "\\u{" + hex(scalar.value, digits: 4) + "}"
            default:
                body.unicodeScalars.append(scalar)
                if body.utf8.count > maxValueBytes {
                    body.unicodeScalars.removeLast()
                    cut = true
                    break scan
                }
                continue
            }
            quoted = true
            if body.utf8.count + piece.utf8.count > maxValueBytes {
                cut = true
                break scan
            }
            body += piece
        }
        if cut {
            let digest = GenericHash.publicDigest(Array(value.utf8), key: Array("keygate.gate.audit-cut.v1".utf8), outputBytes: 16)
            body += "...[cut: \(value.utf8.count) bytes, blake2b " + digest.prefix(8).map { hex(UInt32($0), digits: 2) }.joined() + "]"
            quoted = true
        }
        return quoted ? "\"" + body + "\"" : body
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// Appends one decision about `uid` to that uid's own file. Never throws: a record that cannot be
    /// written loses the line only. `environment`: the one the program's main built.
    static func append(uid: UInt32, _ fields: [(String, String?)], environment: KeygateEnvironment) {
        guard ProcessIdentity.euid == 0 || isTestHookBuild(environment) else { return }
        do { try GatekeeperPaths.makeFolder(GatekeeperPaths.auditUserFolder(environment), mode: 0o700) } catch {
            return   // without the folder, nothing is written: the decision stands, the line is lost (best effort)
        }
        write(line(fields), to: userPath(uid: uid, environment), bound: userMaxBytes, environment)
    }

    /// Appends one line that is about no one user. Never throws.
    static func append(_ fields: [(String, String?)], environment: KeygateEnvironment) {
        guard ProcessIdentity.euid == 0 || isTestHookBuild(environment) else { return }
        do { try GatekeeperPaths.makeFolder(folder(environment), mode: 0o700) } catch {
            return   // as above: no folder, no line, and nothing else changes
        }
        write(line(fields), to: path(environment), bound: maxBytes, environment)
    }

    /// A log line of pam_keygate's helper (root's, in login and sshd): kept in the same record, so
    /// that a host with no syslog loses neither. Debug lines are not kept.
    package static func appendModuleLine(_ message: String, priority: String, environment: KeygateEnvironment) {
        append([("source", "pam_keygate"), ("priority", priority), ("message", message)], environment: environment)
    }

    private static func write(_ text: String, to path: String, bound: Int, _ environment: KeygateEnvironment) {
        var bytes = Array(text.utf8)
        guard var fd = openLog(path) else { return }
        defer { Descriptor.close(fd) }
        if case .success(let info) = FileStatus.of(descriptor: fd), info.size + bytes.count > bound,
           let rotated = rotate(fd, path: path, environment) {
            Descriptor.close(fd)
            fd = rotated
        }
        Descriptor.writeOnce(fd, bytes)
        bytes.removeAll()
    }

    private static func isTestHookBuild(_ environment: KeygateEnvironment) -> Bool {
        GatekeeperPaths.testRoot(environment) != nil
    }

    /// A log, opened for appending: a regular file of ours with one link, else nothing.
    private static func openLog(_ path: String) -> Int32? {
        let fd = SafeFile.open(path, .writeOnly | .append | .create | .noControllingTerminal, mode: 0o600)
        guard fd >= 0 else { return nil }
        guard case .success(let info) = FileStatus.of(descriptor: fd), info.isRegular, info.uid == ProcessIdentity.euid,
              info.linkCount == 1 else {
            Descriptor.close(fd)
            return nil
        }
        if info.mode & 0o077 != 0 { FileSystem.changeMode(descriptor: fd, 0o600) }
        return fd
    }

    /// Under the lock, renames a full log to `path`.1 and returns the new one; when another
    /// gatekeeper rotated first, returns the log that is there now. Nil: keep writing to `fd`.
    private static func rotate(_ fd: Int32, path: String, _ environment: KeygateEnvironment) -> Int32? {
        let lock = SafeFile.openLockFile(folder(environment) + "/gatekeeper.lock")
        guard lock >= 0 else { return nil }
        defer { Descriptor.close(lock) }
        guard AdvisoryLock.exclusive(lock) == nil else { return nil }
        guard case .success(let open) = FileStatus.of(descriptor: fd) else { return nil }
        if case .success(let named) = FileStatus.of(path, links: .refuse), named.inode == open.inode, named.device == open.device {
            guard FileSystem.rename(path, to: path + ".1") == nil else { return nil }
        }
        return openLog(path)
    }

    /// `2026-12-06T05:10:03Z`.
    static func timestamp(_ time: Int) -> String {
        guard let parts = CalendarTime.utc(time) else { return "\(time)" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.year)-\(two(parts.month))-\(two(parts.day))T"
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))Z"
    }
}
