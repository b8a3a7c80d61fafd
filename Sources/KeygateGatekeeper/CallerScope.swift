// The reuse scope of the process that called the gatekeeper, from the kernel alone
// (docs/GATEKEEPER.md, "Scopes no process can join"). The caller is the setuid helper's
// parent, or the process the kernel names as the daemon socket's peer (SO_PEERCRED, checked
// alive through a pidfd). Nothing in the request can name a scope, and every scope is
// anchored on something no other process can enter after the fact:
// - tty: the controlling terminal, the session and its leader's start time (a terminal is
//   taken only by a session leader, and a session is entered only by being forked into it);
// - session: the session and its leader's start time;
// - ppid: the caller's parent and its start time, only while the parent is in the caller's
//   own session and adopts no orphans of other sessions (never PID 1 or a pid namespace's
//   init); a process re-parented to a subreaper in another session is refused;
// - process: the caller itself, by pid and start time: what a caller gets when its anchor is
//   gone (the session leader exited, the parent died or is an adopter), which means "ask again";
// - global.
// A caller without a terminal gets its session (docs/DECISIONS.md, "A caller without a
// terminal gets its session"). Start times stop a recycled pid from inheriting a window.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct CallerScope: Sendable, Equatable {
    /// The scope's id in the records: "tty.<dev>.<sid>.<leader start>", "session.<sid>.<leader start>",
    /// "ppid.<pid>.<start>", "process.<pid>.<start>", "global".
    let id: String
    /// The caller and its start time, for handles.
    let callerPID: Int32
    let callerStart: UInt64

    /// The scope of process `caller` for `kind`. Without a terminal, tty is the session; a scope
    /// whose anchor is gone or joinable is the caller's own process.
    static func of(caller: Int32, _ kind: ReuseScope.Kind) throws -> CallerScope {
        guard let callerStat = ProcStat.read(pid: caller) else {
            throw KeychainError.notAvailable("the gatekeeper could not read its caller in /proc: is /proc mounted?")
        }
        let anchored = anchor(caller: caller, callerStat, kind)
        return CallerScope(id: anchored ?? "process.\(caller).\(callerStat.startTime)", callerPID: caller,
                           callerStart: callerStat.startTime)
    }

    /// The scope id for `kind`, or nil when its anchor is gone or could be joined.
    private static func anchor(caller: Int32, _ callerStat: ProcStat, _ kind: ReuseScope.Kind) -> String? {
        switch kind {
        case .global:
            return "global"
        case .tty, .session:
            guard let leaderStart = sessionLeaderStart(callerStat) else { return nil }
            if kind == .tty, callerStat.ttyNumber != 0 {
                return "tty.\(callerStat.ttyNumber).\(callerStat.session).\(leaderStart)"
            }
            return "session.\(callerStat.session).\(leaderStart)"
        case .ppid:
            let parent = callerStat.parent
            guard !adoptsOrphans(parent), let parentStat = ProcStat.read(pid: parent),
                  parentStat.session == callerStat.session else { return nil }
            return "ppid.\(parent).\(parentStat.startTime)"
        }
    }

    /// The start time of the caller's session leader, while the leader is alive and still leads
    /// that session; nil when it exited (a session outlives its leader), or when the leader is an
    /// init process, whose session holds whatever it started without a session of its own.
    private static func sessionLeaderStart(_ callerStat: ProcStat) -> UInt64? {
        let sid = callerStat.session
        guard sid > 0, !adoptsOrphans(sid), let leader = ProcStat.read(pid: sid), leader.session == sid else { return nil }
        return leader.startTime
    }

    /// PID 1, or the init of a pid namespace (its NSpid ends in 1): the kernel re-parents orphans to
    /// them. A subreaper cannot be told from /proc; the same-session rule above stands in for that.
    static func adoptsOrphans(_ pid: Int32) -> Bool {
        pid <= 1 || ProcStatus.namespacePID(of: pid) == 1
    }

    /// False when the process a scope id names (its session leader, the parent of a ppid scope,
    /// the caller of a process scope) is gone or its pid now names another process: that scope
    /// can never come back. Ids it cannot read ("global", anything else) count as live.
    static func isLive(_ id: String) -> Bool {
        let fields = id.split(separator: ".")
        let pidField: Substring, startField: Substring
        switch (fields.first, fields.count) {
        case ("tty", 4): (pidField, startField) = (fields[2], fields[3])
        case ("session", 3), ("ppid", 3), ("process", 3): (pidField, startField) = (fields[1], fields[2])
        default: return true
        }
        guard let pid = Int32(pidField), let start = UInt64(startField) else { return true }
        return ProcStat.read(pid: pid)?.startTime == start
    }

    // MARK: The setuid helper's caller

    /// The process that started this helper: its parent, while the parent is in the helper's own
    /// session. A parent that exited before the helper looked has re-parented it to an adopter (PID 1,
    /// a subreaper), which is not the caller and whose scope nobody should borrow: nil.
    static func helperCaller() -> Int32? {
        let parent = ProcessIdentity.ppid
        guard !adoptsOrphans(parent), let own = ProcStat.read(pid: ProcessIdentity.pid), let parentStat = ProcStat.read(pid: parent),
              parentStat.session == own.session else { return nil }
        return parent
    }

    static func callerGone() -> KeychainError {
        .notAvailable("""
            the program that started the gatekeeper is gone, or is not in the gatekeeper's session: nothing was opened; run the \
            command again from a live process
            """)
    }
}
