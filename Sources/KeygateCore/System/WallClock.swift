// The wall clock in whole seconds since the epoch (time(2), or clock_gettime(2)'s CLOCK_REALTIME
// where the caller asked the clock itself): timestamps a person reads and
// expiries stored in files, and a moment as UTC calendar fields (gmtime_r(3)). Deadlines use
// MonotonicClock; the gatekeeper's windows, BootClock.
internal import Glibc

package enum WallClock {
    /// Seconds since 1970-01-01 UTC, as time(NULL) gives them.
    package static var seconds: Int { time(nil) }

    /// Seconds since 1970-01-01 UTC, as clock_gettime(CLOCK_REALTIME) gives them (tv_sec).
    package static var realtimeSeconds: Int {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return now.tv_sec
    }
}

/// A moment as UTC calendar fields (gmtime_r(3)).
package struct CalendarTime: Sendable, Equatable {
    package let year: Int32
    /// 1 to 12.
    package let month: Int32
    package let day: Int32
    package let hour: Int32
    package let minute: Int32
    package let second: Int32

    /// `seconds` since the epoch in UTC; nil when gmtime_r cannot represent it.
    package static func utc(_ seconds: Int) -> CalendarTime? {
        var t = seconds
        var parts = tm()
        guard gmtime_r(&t, &parts) != nil else { return nil }
        return CalendarTime(year: parts.tm_year + 1900, month: parts.tm_mon + 1, day: parts.tm_mday,
                            hour: parts.tm_hour, minute: parts.tm_min, second: parts.tm_sec)
    }
}
