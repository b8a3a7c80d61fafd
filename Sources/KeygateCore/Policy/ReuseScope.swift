// Which processes share one reuse window, as sudo's timestamp_type: the scope's id
// is part of what the gatekeeper records an authentication under (it derives its own from
// the kernel: CallerScope). The terminal comes from field 7 (tty_nr) of /proc/self/stat (ProcStat), the session from getsid(2), the
// parent from getppid(2); nothing here touches a key.

/// sudo's timestamp_type: which processes share one reuse window.
public struct ReuseScope: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Processes on the same controlling terminal (the default).
        case tty
        /// Processes of the same login session.
        case session
        /// Every process of the user.
        case global
        /// Children of the same parent process.
        case ppid
    }

    /// The kind actually in force (tty is the session with no terminal: docs/DECISIONS.md).
    public let kind: Kind
    /// A short id, as `keygate status` shows it: "tty.<dev>.<sid>", "session.<sid>", "ppid.<parent pid>", "global".
    /// The gatekeeper derives its own, with start times, from the kernel (CallerScope).
    public let id: String

    init(kind: Kind, id: String) {
        self.kind = kind
        self.id = id
    }

    /// The scope of the calling process.
    public static func current(_ kind: Kind) -> ReuseScope {
        switch kind {
        case .tty:
            guard let device = controllingTerminal() else { return current(.session) }
            // The session id too, as sudo records it: a new login that happens to get
            // the same terminal device must not inherit an old window.
            return ReuseScope(kind: .tty, id: "tty.\(device).\(ProcessIdentity.sid)")
        case .session:
            return ReuseScope(kind: .session, id: "session.\(ProcessIdentity.sid)")
        case .ppid:
            return ReuseScope(kind: .ppid, id: "ppid.\(ProcessIdentity.ppid)")
        case .global:
            return ReuseScope(kind: .global, id: "global")
        }
    }

    /// The controlling terminal's device number (tty_nr), or nil with none or when
    /// /proc cannot be read.
    static func controllingTerminal() -> Int64? {
        guard let stat = ProcStat.line(of: "self") else { return nil }
        return terminalDevice(fromStat: stat)
    }

    /// Field 7 of a /proc/PID/stat line (ProcStat.fields).
    static func terminalDevice(fromStat line: String) -> Int64? {
        // fields: state(3) ppid(4) pgrp(5) session(6) tty_nr(7) ...
        guard let rest = ProcStat.fields(line), rest.count > 4, let device = Int64(rest[4]), device != 0 else { return nil }
        return device
    }
}
