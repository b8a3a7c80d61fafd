// The reuse scope of the process that called the gatekeeper, from the kernel alone
// (docs/GATEKEEPER.md). The gatekeeper is the caller's child: its parent is the caller,
// and it inherited the caller's session and controlling terminal. Like sudo, each scope
// carries the start time of the process it names (the session leader, the caller's
// parent), so a recycled pid or terminal never inherits an earlier window. Nothing in
// the request can name a scope.
internal import Glibc

struct CallerScope: Sendable, Equatable {
    /// The scope's id in the records: "tty.<dev>.<sid>.<leader start>", "session.<sid>.<leader start>",
    /// "ppid.<pid>.<start>", "global".
    let id: String
    /// The caller (the gatekeeper's parent) and its start time, for handles.
    let callerPID: Int32
    let callerStart: UInt64

    /// The scope of this process's parent for `kind`; tty falls back to ppid without a terminal.
    static func ofParent(_ kind: ReuseScope.Kind) throws -> CallerScope {
        let caller = getppid()
        guard let callerStat = ProcStat.read(pid: caller) else {
            throw KeychainError.notAvailable("the gatekeeper could not read its caller in /proc: is /proc mounted?")
        }
        let scopeID: String
        switch kind {
        case .global:
            scopeID = "global"
        case .tty, .session:
            guard let mine = ProcStat.read(pid: getpid()), let leader = ProcStat.read(pid: mine.session) else {
                return try ofParentProcess(caller: caller, callerStat: callerStat)
            }
            if kind == .tty {
                guard mine.ttyNumber != 0 else { return try ofParentProcess(caller: caller, callerStat: callerStat) }
                scopeID = "tty.\(mine.ttyNumber).\(mine.session).\(leader.startTime)"
            } else {
                scopeID = "session.\(mine.session).\(leader.startTime)"
            }
        case .ppid:
            return try ofParentProcess(caller: caller, callerStat: callerStat)
        }
        return CallerScope(id: scopeID, callerPID: caller, callerStart: callerStat.startTime)
    }

    /// ppid: the caller's own parent (the shell that ran `keygate`), with its start time.
    private static func ofParentProcess(caller: Int32, callerStat: ProcStat) throws -> CallerScope {
        guard let parent = ProcStat.read(pid: callerStat.parent) else {
            throw KeychainError.notAvailable("the gatekeeper could not read its caller's parent in /proc")
        }
        return CallerScope(id: "ppid.\(callerStat.parent).\(parent.startTime)", callerPID: caller, callerStart: callerStat.startTime)
    }
}
