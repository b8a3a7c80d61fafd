// Seconds since boot, counting suspend (CLOCK_BOOTTIME): the gatekeeper's records and windows
// are kept in it, as sudo's timestamps are, so a changed wall clock neither extends nor ends one,
// and a value from before a reboot is meaningless after it (the records live in /run).
internal import Glibc

package enum BootClock {
    package static var seconds: UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_BOOTTIME, &ts)
        return UInt64(ts.tv_sec)
    }
}
