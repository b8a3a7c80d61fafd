// The deadline of ONE D-Bus exchange with the session bus or the Secret Service: every method
// call gets it as GDBus's own reply timeout, and connecting to the bus (which takes no
// timeout) runs under a GCancellable that a watchdog thread cancels. A daemon that stops
// answering fails the call that waits for it (G_IO_ERROR_TIMED_OUT or _CANCELLED) within
// the limit, while a long healthy operation (deleting 10,000 items, one call each) is never
// cut. The mapping of those errors to a message lives in SecretServiceFailure.
internal import CGio
internal import CSystem

struct ServiceDeadline: Sendable {
    let limit: Duration

    init(_ limit: Duration) { self.limit = limit }

    /// The limit as GDBus's timeout_msec (at least 1 ms: 0 or -1 would mean GDBus's default of 25 s).
    var milliseconds: Int32 {
        let (seconds, attoseconds) = limit.components
        let ms = max(0, seconds) * 1000 + max(0, attoseconds) / 1_000_000_000_000_000
        return Int32(clamping: max(1, ms))
    }

    /// The limit as people read it: "5 s", "1.5 s".
    var limitText: String {
        let (seconds, attoseconds) = limit.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }

    /// Runs `body` with a GCancellable that is cancelled when the limit passes: for the steps
    /// GDBus gives no timeout (finding and connecting to the session bus). The timer is a
    /// watchdog thread of CSystem's (watchdog.h), stopped and joined before the cancellable is
    /// released, so it never fires on freed memory.
    func withCancellable<R>(_ body: (OpaquePointer?) throws -> R) rethrows -> R {
        guard let cancellable = g_cancellable_new() else { return try body(nil) }
        let watchdog = keygate_watchdog_start(Int(milliseconds), { context in
            if let context { g_cancellable_cancel(OpaquePointer(context)) }
        }, UnsafeMutableRawPointer(cancellable))
        defer {
            keygate_watchdog_stop(watchdog)
            g_object_unref(UnsafeMutableRawPointer(cancellable))
        }
        return try body(cancellable)
    }
}
