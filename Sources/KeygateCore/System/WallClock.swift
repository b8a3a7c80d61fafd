// The wall clock in whole seconds since the epoch (time(2)): timestamps a person reads and
// expiries stored in files. Deadlines use MonotonicClock; the gatekeeper's windows, BootClock.
internal import Glibc

package enum WallClock {
    /// Seconds since 1970-01-01 UTC, as time(NULL) gives them.
    package static var seconds: Int { time(nil) }
}
