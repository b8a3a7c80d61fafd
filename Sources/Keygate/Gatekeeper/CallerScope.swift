// The reuse scope of the process that called the gatekeeper, from the kernel alone
// (docs/GATEKEEPER.md). The caller is the setuid helper's parent, or the process the
// kernel names as the daemon socket's peer (SO_PEERCRED, checked alive through a pidfd).
// Its session and controlling terminal come from its /proc entry. Like sudo, each scope
// carries the start time of the process it names (the session leader, the caller's
// parent), so a recycled pid or terminal never inherits an earlier window. Nothing in
// the request can name a scope.
internal import Glibc

struct CallerScope: Sendable, Equatable {
    /// The scope's id in the records: "tty.<dev>.<sid>.<leader start>", "session.<sid>.<leader start>",
    /// "ppid.<pid>.<start>", "global".
    let id: String
    /// The caller and its start time, for handles.
    let callerPID: Int32
    let callerStart: UInt64

    /// The scope of process `caller` for `kind`; tty falls back to ppid without a terminal.
    static func of(caller: Int32, _ kind: ReuseScope.Kind) throws -> CallerScope {
        guard let callerStat = ProcStat.read(pid: caller) else {
            throw KeychainError.notAvailable("the gatekeeper could not read its caller in /proc: is /proc mounted?")
        }
        let scopeID: String
        switch kind {
        case .global:
            scopeID = "global"
        case .tty, .session:
            // Without a terminal a tty scope is the parent's: its session leader is not read.
            if kind == .tty, callerStat.ttyNumber == 0 { return try ofParentProcess(caller: caller, callerStat: callerStat) }
            guard let leader = ProcStat.read(pid: callerStat.session) else {
                return try ofParentProcess(caller: caller, callerStat: callerStat)
            }
            if kind == .tty {
                scopeID = "tty.\(callerStat.ttyNumber).\(callerStat.session).\(leader.startTime)"
            } else {
                scopeID = "session.\(callerStat.session).\(leader.startTime)"
            }
        case .ppid:
            return try ofParentProcess(caller: caller, callerStat: callerStat)
        }
        return CallerScope(id: scopeID, callerPID: caller, callerStart: callerStat.startTime)
    }

    /// False when the process a scope id names (its session leader, or the parent of a ppid
    /// scope) is gone or its pid now names another process: that scope can never come back.
    /// Ids it cannot read ("global", anything else) count as live.
    static func isLive(_ id: String) -> Bool {
        let fields = id.split(separator: ".")
        let pidField: Substring, startField: Substring
        switch (fields.first, fields.count) {
        case ("tty", 4): (pidField, startField) = (fields[2], fields[3])
        case ("session", 3), ("ppid", 3): (pidField, startField) = (fields[1], fields[2])
        default: return true
        }
        guard let pid = Int32(pidField), let start = UInt64(startField) else { return true }
        return ProcStat.read(pid: pid)?.startTime == start
    }

    /// ppid: the caller's own parent (the shell that ran `keygate`), with its start time.
    private static func ofParentProcess(caller: Int32, callerStat: ProcStat) throws -> CallerScope {
        guard let parent = ProcStat.read(pid: callerStat.parent) else {
            throw KeychainError.notAvailable("the gatekeeper could not read its caller's parent in /proc")
        }
        return CallerScope(id: "ppid.\(callerStat.parent).\(parent.startTime)", callerPID: caller, callerStart: callerStat.startTime)
    }
}
