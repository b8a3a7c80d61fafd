// The callers the gatekeeper's daemon has accepted and not yet answered (docs/GATEKEEPER.md,
// "The daemon under abuse"). The daemon waits for all of them at once and answers a caller
// only once its request has arrived, so a caller that connects and says nothing costs the
// others nothing; it is dropped at its deadline. One user may keep at most `perUser` callers
// waiting (64 in all), and among the callers whose requests are in, the user served longest
// ago goes first: a user who floods the socket slows another user's answer by at most one of
// its own requests. A caller turned away, or dropped, runs the setuid helper instead.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct GateCallerQueue {
    struct Caller: Equatable {
        let fd: Int32
        let uid: UInt32
        let pid: Int32
        /// When its request must have arrived (monotonic milliseconds).
        let deadline: Int
    }

    static let perUser = 8
    static let total = 64

    private(set) var callers: [Caller] = []
    /// The turn at which each user was last served (a counter, not a time).
    private var lastServed: [UInt32: Int] = [:]
    private var turn = 0

    var isEmpty: Bool { callers.isEmpty }

    /// Takes a caller in; false when its user already has `perUser` waiting or the queue is full.
    mutating func admit(_ caller: Caller) -> Bool {
        guard callers.count < Self.total, callers.lazy.filter({ $0.uid == caller.uid }).count < Self.perUser else { return false }
        callers.append(caller)
        return true
    }

    /// Of the callers among `ready` (their request, or their end, has arrived), the one to answer
    /// now: the user served longest ago first, then the caller that came first. It leaves the queue.
    mutating func next(among ready: Set<Int32>) -> Caller? {
        var best: Int?
        for (index, caller) in callers.enumerated() where ready.contains(caller.fd) {
            guard let current = best else { best = index; continue }
            if lastServed[caller.uid, default: -1] < lastServed[callers[current].uid, default: -1] { best = index }
        }
        guard let best else { return nil }
        let caller = callers.remove(at: best)
        turn += 1
        lastServed[caller.uid] = turn
        if lastServed.count > 4 * Self.total {
            lastServed = lastServed.filter { $0.value > turn - Self.total }   // forget users long gone
        }
        return caller
    }

    /// The callers whose deadline passed without a request: they leave the queue (the daemon closes them).
    mutating func expire(now: Int) -> [Caller] {
        let expired = callers.filter { $0.deadline <= now }
        callers.removeAll { $0.deadline <= now }
        return expired
    }

    /// How long the daemon may sleep before the next deadline, at most `idle` milliseconds.
    func pollTimeout(now: Int, idle: Int32) -> Int32 {
        guard let first = callers.map(\.deadline).min() else { return idle }
        return Int32(max(0, min(Int(idle), first - now)))
    }
}
