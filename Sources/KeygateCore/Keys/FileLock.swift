// An exclusive advisory lock (flock(2)) on a small file in the keychain folder, held
// while protectors and keys.json change together, so two processes (a PAM session and
// a CLI unlock, say) never leave keys.json naming a gate key that login.json lost.
// A process that must never hang on another one's lock (keygate-pam-helper, inside every
// login) sets `waitDeadline`: the wait then polls until that moment and gives up with
// an error saying who to look for, instead of blocking for as long as the holder likes.

package enum FileLock {
    /// CLOCK_MONOTONIC nanoseconds after which no lock is waited for any more; nil = wait
    /// as long as it takes (the CLI). Set by keygate-pam-helper to its call's budget, once,
    /// on its one thread, before any lock is taken.
    nonisolated(unsafe) package static var waitDeadline: UInt64?

    /// CLOCK_MONOTONIC now, in nanoseconds.
    package static func monotonicNow() -> UInt64 {
        MonotonicClock.nanoseconds
    }

    /// Runs `body` holding an exclusive lock on `path` (created 0600 if missing).
    static func withExclusiveLock<R>(_ path: String, _ body: () throws -> R) throws -> R {
        let fd = SafeFile.openLockFile(path)
        guard fd >= 0 else {
            let e = SystemErrno.last
            throw KeychainError.notAvailable("""
                could not open the lock file \(path): \(e.text); check that its folder belongs to you and is \
                mode 0700
                """)
        }
        defer { Descriptor.close(fd) }  // closing releases the lock
        if let deadline = waitDeadline {
            try lock(fd, path, until: deadline)
        } else {
            if let e = AdvisoryLock.exclusive(fd) {
                throw KeychainError.notAvailable("could not lock \(path): \(e.text); check the disk and try again")
            }
        }
        return try body()
    }

    /// Tries the lock without blocking every 10 ms until `deadline`.
    private static func lock(_ fd: Int32, _ path: String, until deadline: UInt64) throws {
        while let e = AdvisoryLock.tryExclusive(fd) {
            guard e == .wouldBlock else {
                throw KeychainError.notAvailable("could not lock \(path): \(e.text); check the disk and try again")
            }
            guard monotonicNow() < deadline else {
                throw KeychainError.notAvailable("""
                    another process held \(path) past this call's time budget: gave up waiting (`fuser -v \(path)` shows who holds it)
                    """)
            }
            Pause.sleep(nanoseconds: 10_000_000, resumingAfterSignal: false)
        }
    }
}
