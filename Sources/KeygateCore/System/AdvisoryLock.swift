// An exclusive advisory lock on an open file (flock(2)), held until the descriptor is closed.
// Both forms retry EINTR; a caller that must not hang polls `tryExclusive` against its own
// deadline (FileLock, the session counter, the gatekeeper's records).
internal import Glibc

package enum AdvisoryLock {
    /// flock(LOCK_EX): waits as long as the holder keeps it. nil when held, else why not.
    package static func exclusive(_ fd: Int32) -> SystemErrno? {
        SafeFile.retryingOnEINTR { flock(fd, LOCK_EX) } == 0 ? nil : .current
    }

    /// flock(LOCK_EX | LOCK_NB): nil when held, `.wouldBlock` when another holds it, else why not.
    package static func tryExclusive(_ fd: Int32) -> SystemErrno? {
        SafeFile.retryingOnEINTR { flock(fd, LOCK_EX | LOCK_NB) } == 0 ? nil : .current
    }
}
