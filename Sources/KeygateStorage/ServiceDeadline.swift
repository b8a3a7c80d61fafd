// The deadline of ONE D-Bus exchange with the session bus or the Secret Service: every method
// call gets it as sd-bus's reply timeout, and connecting to the bus (authentication and Hello)
// gets it as the connection's method-call timeout, which sd-bus also applies to its
// authentication. A daemon that stops answering fails the call that waits for it (sd-bus
// answers it with a NoReply of its own, "Method call timed out") within the limit, while a
// long healthy operation (deleting 10,000 items, one call each) is never cut. The mapping of
// those errors to a message lives in SecretServiceFailure.
import KeygateCore

package struct ServiceDeadline: Sendable {
    let limit: Duration

    package init(_ limit: Duration) { self.limit = limit }

    /// The limit in microseconds, as sd-bus takes it (at least 1: 0 would mean sd-bus's default of 25 s).
    var microseconds: UInt64 {
        let (seconds, attoseconds) = limit.components
        let us = max(0, seconds) * 1_000_000 + max(0, attoseconds) / 1_000_000_000_000
        return UInt64(max(1, us))
    }

    /// The limit as people read it: "5 s", "1.5 s".
    var limitText: String {
        let (seconds, attoseconds) = limit.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }
}
