// Consecutive authentication failures per user, for the lockout that follows repeated
// failures (Apple's biometry lockout): <data>/lockout.json, written atomically by
// AtomicFile (mode 0600) under an flock(2) on the data folder, so that parallel
// attempts each count. A missing or corrupt file reads as zero failures: the counter
// fails open, because it only slows guessing (PAM's fail delay still applies); it never
// decides whether a key opens.
internal import Glibc
internal import FoundationEssentials

/// Consecutive authentication failures per user, for the lockout (Apple's biometry lockout): a small file
/// <data>/lockout.json written atomically (use AtomicFile from Keys/AtomicFile.swift).
struct FailureCounter: Sendable {
    static let fileName = "lockout.json"
    static let fileMode: mode_t = 0o600
    private static let maxBytes = 4096

    let directory: String
    let threshold: Int
    let lockoutSeconds: UInt32
    private let now: @Sendable () -> UInt64

    var path: String { directory + "/" + Self.fileName }

    /// `threshold` 0 (or `lockoutSeconds` 0) disables the lockout; failures are still counted.
    init(directory: String, threshold: Int, lockoutSeconds: UInt32,
         now: @escaping @Sendable () -> UInt64 = { UInt64(time(nil)) }) {
        self.directory = directory
        self.threshold = threshold
        self.lockoutSeconds = lockoutSeconds
        self.now = now
    }

    /// Throws .authFailed("too many failed attempts: gated items are locked for N more seconds") while locked out.
    func checkNotLockedOut() throws {
        guard let left = secondsLeft() else { return }
        throw KeychainError.authFailed("too many failed attempts: gated items are locked for \(left) more seconds; "
            + "wait, then try again with the right password")
    }

    /// Counts one failure; the one that reaches the threshold starts the lockout and
    /// restarts the count, so the next lockout needs `threshold` new failures.
    func recordFailure() {
        try? PrivateDirectory.make(directory)
        withFolderLock {
            var state = load()
            state.failures += 1
            if lockoutEnabled, state.failures >= threshold {
                state.lockedUntil = now() + UInt64(lockoutSeconds)
                state.failures = 0
            }
            save(state)
        }
    }

    /// A successful authentication: forgets every failure and any lockout.
    func recordSuccess() {
        guard AtomicFile.exists(path) else { return }
        withFolderLock { try? AtomicFile.remove(path) }
    }

    /// Seconds until the lockout ends, or nil when not locked out.
    func secondsLeft() -> UInt32? {
        guard lockoutEnabled else { return nil }
        let state = load()
        let current = now()
        guard state.lockedUntil > current else { return nil }
        // A clock set back (or a hand-edited file) must not lock for longer than one period.
        return UInt32(min(state.lockedUntil - current, UInt64(lockoutSeconds)))
    }

    /// Consecutive failures since the last success or the last lockout (for status and tests).
    var failures: Int { load().failures }

    // MARK: - File

    private struct State: Codable {
        var version = 1
        var failures = 0
        /// Seconds since 1970 at which the lockout ends; 0 when none was started.
        var lockedUntil: UInt64 = 0
    }

    private var lockoutEnabled: Bool { threshold > 0 && lockoutSeconds > 0 }

    private func load() -> State {
        guard let bytes = try? AtomicFile.read(path, maxBytes: Self.maxBytes),
              let state = try? JSONDecoder().decode(State.self, from: Data(bytes)),
              state.version == 1, state.failures >= 0 else {
            return State()
        }
        return state
    }

    private func save(_ state: State) {
        guard let data = try? JSONEncoder().encode(state) else { return }
        try? AtomicFile.write(Array(data), to: path, mode: Self.fileMode)
    }

    /// Runs `body` holding an exclusive flock on the data folder; without the folder, runs it unlocked.
    private func withFolderLock(_ body: () -> Void) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { body(); return }
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { break }
        }
        body()
        _ = flock(fd, LOCK_UN)
    }
}
