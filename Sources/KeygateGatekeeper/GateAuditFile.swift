// The gatekeeper's own audit record (issue 39, item 4; docs/GATEKEEPER.md, "The audit
// record"): every decision the gatekeeper makes, one line each, appended by root to
// /var/log/keygate/gatekeeper.log whatever syslog does. syslog(3) drops a line without a word
// when nothing listens on /dev/log (containers, minimal hosts), and the caller's own audit
// lines are written by a process of the user, which could leave them out; this record is
// neither. The folder is root's, 0700, the file root's, 0600, opened with O_APPEND, so no
// user reads, writes, truncates, renames or replaces it. Bounded: past `maxBytes` the file is
// renamed to gatekeeper.log.1 (replacing the one before) under a lock, and a new one begun,
// so the record never holds more than twice `maxBytes`. Best effort: a full disk loses a
// line, never a decision. Test-hook builds with KEYGATE_TEST_GATE_DIR write below it.
// pam_keygate's helper keeps its log lines here too (`appendModuleLine`, `source=pam_keygate`).
//
// A line: `2026-12-06T05:10:03Z uid=1001 user=alice op=open result=granted basis=window
// scope=tty.34816.1201.5521 pam-service=keygate service=signing account=release pid=4242`,
// the fields quoted as AuditRecord quotes them; never a secret (there is no field for one).
import KeygateCore
import KeygateGateWire

package enum GateAuditFile {
    static func folder(_ environment: KeygateEnvironment) -> String { GatekeeperPaths.auditFolder(environment) }
    static func path(_ environment: KeygateEnvironment) -> String { GatekeeperPaths.auditPath(environment) }
    static func previousPath(_ environment: KeygateEnvironment) -> String { path(environment) + ".1" }

    /// Past this size the file is rotated: the record holds at most twice this.
    static let maxBytes = 1 << 20

    /// One line: the time (UTC), then `fields` in order, each `name=value` (quoted when needed).
    static func line(_ fields: [(String, String?)], time: Int = WallClock.seconds) -> String {
        var out = timestamp(time)
        for (name, value) in fields {
            guard let value else { continue }
            out += " " + name + "=" + AuditRecord.quoted(value)
        }
        return out + "\n"
    }

    /// Appends one decision. Never throws: a record that cannot be written loses the line only.
    /// `environment`: the one the program's main built (where a test-hook build keeps the record).
    static func append(_ fields: [(String, String?)], environment: KeygateEnvironment) {
        guard ProcessIdentity.euid == 0 || isTestHookBuild(environment) else { return }
        guard (try? GatekeeperPaths.makeFolder(folder(environment), mode: 0o700)) != nil else { return }
        var bytes = Array(line(fields).utf8)
        guard var fd = openLog(environment) else { return }
        defer { Descriptor.close(fd) }
        if case .success(let info) = FileStatus.of(descriptor: fd), info.size + bytes.count > maxBytes, let rotated = rotate(fd, environment) {
            Descriptor.close(fd)
            fd = rotated
        }
        Descriptor.writeOnce(fd, bytes)
        bytes.removeAll()
    }

    /// A log line of pam_keygate's helper (root's, in login and sshd): kept in the same record, so
    /// that a host with no syslog loses neither (issue 39, 4). Debug lines are not kept.
    package static func appendModuleLine(_ message: String, priority: String, environment: KeygateEnvironment) {
        append([("source", "pam_keygate"), ("priority", priority), ("message", message)], environment: environment)
    }

    private static func isTestHookBuild(_ environment: KeygateEnvironment) -> Bool {
        GatekeeperPaths.testRoot(environment) != nil
    }

    /// The log, opened for appending: a regular file of ours with one link, else nothing.
    private static func openLog(_ environment: KeygateEnvironment) -> Int32? {
        let fd = SafeFile.open(path(environment), .writeOnly | .append | .create | .noControllingTerminal, mode: 0o600)
        guard fd >= 0 else { return nil }
        guard case .success(let info) = FileStatus.of(descriptor: fd), info.isRegular, info.uid == ProcessIdentity.euid,
              info.linkCount == 1 else {
            Descriptor.close(fd)
            return nil
        }
        if info.mode & 0o077 != 0 { FileSystem.changeMode(descriptor: fd, 0o600) }
        return fd
    }

    /// Under the lock, renames a full log to `previousPath` and returns the new one; when another
    /// gatekeeper rotated first, returns the log that is there now. Nil: keep writing to `fd`.
    private static func rotate(_ fd: Int32, _ environment: KeygateEnvironment) -> Int32? {
        let path = path(environment)
        let lock = SafeFile.openLockFile(folder(environment) + "/gatekeeper.lock")
        guard lock >= 0 else { return nil }
        defer { Descriptor.close(lock) }
        guard AdvisoryLock.exclusive(lock) == nil else { return nil }
        guard case .success(let open) = FileStatus.of(descriptor: fd) else { return nil }
        if case .success(let named) = FileStatus.of(path, links: .refuse), named.inode == open.inode, named.device == open.device {
            guard FileSystem.rename(path, to: previousPath(environment)) == nil else { return nil }
        }
        return openLog(environment)
    }

    /// `2026-12-06T05:10:03Z`.
    static func timestamp(_ time: Int) -> String {
        guard let parts = CalendarTime.utc(time) else { return "\(time)" }
        func two(_ v: Int32) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(parts.year)-\(two(parts.month))-\(two(parts.day))T"
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second))Z"
    }
}
