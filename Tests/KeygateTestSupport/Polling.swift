// Waits for a condition instead of sleeping a fixed time: a test that waits for
// a timeout to pass, a clock to tick or a process to finish polls the condition
// with a deadline, so it waits as long as the system needs and no longer.
import Foundation
import Glibc

public enum Polling {
    /// Evaluates `condition` every `interval` seconds until it is true or `timeout` seconds have passed.
    /// Returns whether it became true (the caller asserts on that, so a condition that never comes is a
    /// failure that says so, not a hang).
    @discardableResult
    public static func waitUntil(timeout: TimeInterval, interval: TimeInterval = 0.02,
                                 _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if try condition() { return true }
            if Date() >= deadline { return false }
            Thread.sleep(forTimeInterval: interval)
        }
    }

    /// Waits until time(2) reads at least `seconds` (since 1970), so that a timestamp a store takes in
    /// whole seconds from then on is not earlier. time(2) itself, not Date(): it reads the kernel's coarse
    /// clock, which trails the precise one by up to a tick just after a second begins.
    public static func waitUntilClock(isPast seconds: UInt64) {
        waitUntil(timeout: 3, interval: 0.01) { time(nil) >= time_t(seconds) }
    }
}
