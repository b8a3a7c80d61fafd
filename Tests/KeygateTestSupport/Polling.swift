// Waits for a condition instead of sleeping a fixed time: a test that waits for
// a timeout to pass, a clock to tick or a process to finish polls the condition
// with a deadline, so it waits as long as the system needs and no longer.
import Foundation

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

    /// Waits until the wall clock's whole second is later than that of `date`, so that a timestamp kept in
    /// whole seconds (as the Secret Service keeps them) taken from now on is later than `date`'s.
    public static func waitForNextWholeSecond(after date: Date) {
        let second = date.timeIntervalSince1970.rounded(.down)
        waitUntil(timeout: 2, interval: 0.01) { Date().timeIntervalSince1970.rounded(.down) > second }
    }
}
