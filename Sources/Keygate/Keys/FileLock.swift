// An exclusive advisory lock (flock(2)) on a small file in the keychain folder, held
// while protectors and keys.json change together, so two processes (a PAM session and
// a CLI unlock, say) never leave keys.json naming a gate key that login.json lost.
internal import Glibc

enum FileLock {
    /// Runs `body` holding an exclusive lock on `path` (created 0600 if missing).
    static func withExclusiveLock<R>(_ path: String, _ body: () throws -> R) throws -> R {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let e = errno
            throw KeychainError.notAvailable("could not open the lock file \(path): \(String(cString: strerror(e))); check that its folder belongs to you and is mode 0700")
        }
        defer { close(fd) }  // closing releases the lock
        while flock(fd, LOCK_EX) != 0 {
            let e = errno
            if e == EINTR { continue }
            throw KeychainError.notAvailable("could not lock \(path): \(String(cString: strerror(e))); check the disk and try again")
        }
        return try body()
    }
}
