// A short wait in a retry loop (a busy database, a Secret Service that is starting again):
// nanosleep, resumed for what is left when a signal cuts it short, so the wait is whole.
internal import Glibc

public enum Pause {
    /// Waits `nanoseconds` (under one second). `resumingAfterSignal` false: one nanosleep, which
    /// a signal may end early (a poll loop that looks at its deadline again anyway).
    public static func sleep(nanoseconds: Int, resumingAfterSignal: Bool = true) {
        var wait = timespec(tv_sec: 0, tv_nsec: nanoseconds), left = timespec()
        guard resumingAfterSignal else {
            _ = nanosleep(&wait, nil)
            return
        }
        while nanosleep(&wait, &left) != 0, errno == EINTR { wait = left }
    }

    /// Waits `duration` (under one second).
    public static func sleep(_ duration: Duration) {
        sleep(nanoseconds: Int(duration.components.attoseconds / 1_000_000_000))
    }
}
