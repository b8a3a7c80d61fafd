// Root's record of one user's authentications (docs/GATEKEEPER.md), in the manner of sudo's
// /run/sudo/ts: which PAM service, in which scope, when (CLOCK_BOOTTIME seconds), the
// consecutive failures and the lockout, and the authentication-context handles issued.
// One small text file per uid, mode 0600 root, under a lock taken with a deadline. A file
// from another boot (its boot id differs) is ignored: the clock it counted on restarted.
// The user can neither read, forge, extend nor delete any of it.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct GateRecords: Sendable, Equatable {
    /// One authentication through PAM (`service`, in `scope`). `time` is when it happened and
    /// nothing ever moves it: the checks that need "a password within the last minute" (certify,
    /// fingerUnlockArm) read it alone. `keygate validate` records its extensions beside it.
    struct Authentication: Sendable, Equatable {
        var service: String
        var scope: String
        /// CLOCK_BOOTTIME seconds of the authentication itself.
        var time: UInt64
        /// The last `validate` that extended this authentication's windows (nil: none).
        var extendedAt: UInt64? = nil
        /// The longest gap in the chain from `time` through every extension to `extendedAt`: an
        /// extension counts for a window of W seconds only when every step of the chain was at
        /// most W, that is when each validate came while that window was still open.
        var longestGap: UInt64 = 0

        /// When a window of `window` seconds last (re)started for this authentication: the last
        /// extension when every step of the chain fits inside the window, else the authentication.
        func anchor(window: UInt32) -> UInt64 {
            guard let extendedAt, longestGap <= UInt64(window) else { return time }
            return extendedAt
        }
    }

    struct Handle: Sendable, Equatable {
        /// BLAKE2b of the handle: the file never holds a usable handle.
        var digest: String
        var pid: Int32
        var start: UInt64
        var service: String
        var expires: UInt64
    }

    var bootID: String = ""
    var failures: Int = 0
    var lockedUntil: UInt64 = 0
    var authentications: [Authentication] = []
    var handles: [Handle] = []
    /// Failed fingerprint matches since the last match or password, counted apart from the
    /// password's (Apple's biometry and passcode counters): each scan is counted before fprintd
    /// matches it, as a typed password is.
    var biometryFailures: Int = 0
    /// Apple's biometryLockout: set after `biometryThreshold` failed matches in a row; fingers are
    /// refused until a password authentication succeeds. A reboot drops it with the file.
    var biometryLocked = false

    static let maxBytes = 256 * 1024
    static let maxEntries = 256
    /// Failed matches in a row that lock biometry out (Apple's five).
    static let biometryThreshold = 5
    /// How long a call waits for another call's lock before it gives up.
    static let lockDeadlineMilliseconds = 3000

    // MARK: Decisions

    /// The newest authentication through `service` in `scope` whose window of `window` seconds
    /// is open at `now`: the item's own window, counted from the authentication, or from the last
    /// `validate` that came while this same window was still open (Authentication.anchor).
    func freshAuthentication(service: String, scope: String, window: UInt32, now: UInt64) -> Authentication? {
        guard window > 0 else { return nil }
        return authentications.last {
            guard $0.service == service, $0.scope == scope else { return false }
            let anchor = $0.anchor(window: window)
            return anchor <= now && now - anchor <= UInt64(window)
        }
    }

    /// An authentication in `scope`, through any service but `excluded`, that happened no more than
    /// `seconds` ago: the time of the authentication itself, never of an extension. What certify and
    /// fingerUnlockArm ask ("a password within the last minute").
    func recentAuthentication(scope: String, within seconds: UInt64, excluding excluded: Set<String> = [], now: UInt64) -> Bool {
        authentications.contains { $0.scope == scope && !excluded.contains($0.service) && $0.time <= now && now - $0.time <= seconds }
    }

    /// `keygate validate` (sudo -v): when the authentication through `service` in `scope` is still
    /// inside `window` (validate's own: the keychain's), its windows start again from `now`. Only
    /// the windows still open now are extended: the chain's longest gap grows to this step, so
    /// any shorter window that had closed stays closed (Authentication.anchor). The time of the
    /// authentication itself never moves. False when there is none (the caller authenticates
    /// instead). The failure count and the lockout are left as they are.
    mutating func extend(service: String, scope: String, window: UInt32, now: UInt64) -> Bool {
        guard window > 0,
              let index = authentications.lastIndex(where: { $0.service == service && $0.scope == scope }) else { return false }
        let authentication = authentications[index]
        let anchor = authentication.anchor(window: window)
        guard anchor <= now, now - anchor <= UInt64(window) else { return false }
        let last = authentication.extendedAt ?? authentication.time
        authentications[index].longestGap = max(authentication.longestGap, now >= last ? now - last : 0)
        authentications[index].extendedAt = now
        return true
    }

    mutating func recordSuccess(service: String, scope: String, now: UInt64) {
        authentications.removeAll { $0.service == service && $0.scope == scope }
        authentications.append(Authentication(service: service, scope: scope, time: now))
        if authentications.count > Self.maxEntries { authentications.removeFirst(authentications.count - Self.maxEntries) }
        clearFailures()
    }

    /// A success ends the failure count and the lockout, recorded or not (an unrecorded presence
    /// clears them as any success does, and leaves no authentication behind).
    mutating func clearFailures() {
        failures = 0
        lockedUntil = 0
    }

    /// pam_faillock's preauth: an attempt is counted before PAM sees the answer, so an attempt whose
    /// outcome is never recorded (its process killed, the disk full) is spent all the same. Returns
    /// the seconds left when the user is locked out, refusing the attempt; a count that reached the
    /// threshold without a recorded outcome starts the lockout here.
    mutating func beginAttempt(_ lockout: UserLockout, now: UInt64) -> UInt32? {
        if let left = lockoutSecondsLeft(lockout, now: now) { return left }
        if lockout.isEnabled, failures >= lockout.threshold {
            startLockout(lockout, now: now)
            return lockout.seconds
        }
        failures += 1
        return nil
    }

    /// An attempt that ended before any answer reached PAM (a cancel at the prompt, a caller gone
    /// before it answered) was not a guess: its count is given back.
    mutating func attemptUnanswered() {
        if failures > 0 { failures -= 1 }
    }

    /// After a wrong answer, counted already: the lockout starts once the count reaches the threshold.
    /// Returns the seconds left when it did.
    mutating func attemptFailed(_ lockout: UserLockout, now: UInt64) -> UInt32? {
        if lockout.isEnabled, failures >= lockout.threshold { startLockout(lockout, now: now) }
        return lockoutSecondsLeft(lockout, now: now)
    }

    /// Why a finger's attempt is refused before any scan.
    enum FingerRefusal: Equatable {
        /// The user's one lockout (seconds left): nothing is tried.
        case lockedOut(UInt32)
        /// The biometric lockout: fingers wait for a password.
        case biometryLocked
    }

    /// A finger's attempt, counted before fprintd matches it (never in the password's counter, so
    /// failed matches cannot lock the password fallback out). Returns why it is refused, if it is.
    mutating func beginFingerAttempt(_ lockout: UserLockout, now: UInt64) -> FingerRefusal? {
        if let left = lockoutSecondsLeft(lockout, now: now) { return .lockedOut(left) }
        if biometryLocked { return .biometryLocked }
        biometryFailures += 1
        return nil
    }

    /// A scan that never came (no finger placed, a cancel) was not a guess: its count is given back.
    mutating func fingerUnanswered() {
        if biometryFailures > 0 { biometryFailures -= 1 }
    }

    /// After a failed match, counted already: true when it started the biometric lockout.
    mutating func fingerFailed() -> Bool {
        guard biometryFailures >= Self.biometryThreshold else { return false }
        biometryLocked = true
        biometryFailures = 0
        return true
    }

    /// After a success: a match clears the failed matches; a password also ends the biometric lockout.
    mutating func credentialSucceeded(password: Bool) {
        biometryFailures = 0
        if password { biometryLocked = false }
    }

    private mutating func startLockout(_ lockout: UserLockout, now: UInt64) {
        lockedUntil = now + UInt64(lockout.seconds)
        failures = 0
    }

    func lockoutSecondsLeft(_ lockout: UserLockout, now: UInt64) -> UInt32? {
        guard lockout.isEnabled, lockedUntil > now else { return nil }
        return UInt32(min(lockedUntil - now, UInt64(lockout.seconds)))
    }

    /// Drops every authentication and handle (`keygate lock --all`).
    mutating func forgetAll() {
        authentications.removeAll()
        handles.removeAll()
    }

    /// Drops the authentications of scopes that have ended (their process is gone, or its pid
    /// now names another process), so the file holds the live scopes only. Run when a success
    /// is recorded: an ended scope can never be the caller's again.
    mutating func dropEndedScopes(isLive: (String) -> Bool) {
        authentications.removeAll { !isLive($0.scope) }
    }

    /// Drops what belongs to one scope (`keygate lock`).
    mutating func forget(scope: String) {
        authentications.removeAll { $0.scope == scope }
    }

    mutating func prune(now: UInt64) {
        handles.removeAll { $0.expires <= now }
        if handles.count > Self.maxEntries { handles.removeFirst(handles.count - Self.maxEntries) }
    }

    // MARK: File

    static var now: UInt64 { BootClock.seconds }

    /// This boot's id: read once per process (it cannot change while the process runs).
    static let currentBootID: String = {
        do {
            guard let bytes = try AtomicFile.read("/proc/sys/kernel/random/boot_id", maxBytes: 64) else { return "" }
            return String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        } catch {
            // No /proc: every record is of the boot "", written and read alike, and /run is still a tmpfs per boot.
            return ""
        }
    }()

    func encoded() -> [UInt8] {
        var text = "keygate-records 1\nboot \(bootID)\nfailures \(failures) \(lockedUntil)\n"
        if biometryFailures != 0 || biometryLocked { text += "biometry \(biometryFailures) \(biometryLocked ? 1 : 0)\n" }
        for a in authentications {
            // An extension adds two fields, which a gatekeeper that knows none drops with the line (it asks again).
            if let extended = a.extendedAt {
                text += "auth \(a.service) \(a.scope) \(a.time) \(extended) \(a.longestGap)\n"
            } else {
                text += "auth \(a.service) \(a.scope) \(a.time)\n"
            }
        }
        for h in handles { text += "handle \(h.digest) \(h.pid) \(h.start) \(h.service) \(h.expires)\n" }
        return Array(text.utf8)
    }

    /// Parses a records file; anything unreadable is an empty record (fail towards asking),
    /// except the lockout, which a damaged line cannot shorten: root wrote every line.
    static func decode(_ bytes: [UInt8], bootID: String) -> GateRecords {
        var records = GateRecords(bootID: bootID)
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.first == "keygate-records 1", lines.count > 1, lines[1] == "boot \(bootID)" else { return records }
        for line in lines.dropFirst(2) {
            let f = line.split(separator: " ").map(String.init)
            switch f.first {
            case "failures" where f.count == 3:
                records.failures = Int(f[1]) ?? 0
                records.lockedUntil = UInt64(f[2]) ?? 0
            case "biometry" where f.count == 3:
                records.biometryFailures = Int(f[1]) ?? 0
                // A damaged flag cannot end the lockout: only "0" does.
                records.biometryLocked = f[2] != "0"
            case "auth" where f.count == 4:
                if let t = UInt64(f[3]) { records.authentications.append(Authentication(service: f[1], scope: f[2], time: t)) }
            case "auth" where f.count == 6:
                if let t = UInt64(f[3]), let extended = UInt64(f[4]), let gap = UInt64(f[5]), extended >= t {
                    records.authentications.append(Authentication(service: f[1], scope: f[2], time: t, extendedAt: extended,
                                                                  longestGap: gap))
                }
            case "handle" where f.count == 6:
                if let pid = Int32(f[2]), let start = UInt64(f[3]), let expires = UInt64(f[5]) {
                    records.handles.append(Handle(digest: f[1], pid: pid, start: start, service: f[4], expires: expires))
                }
            default:
                continue
            }
        }
        return records
    }

    /// Runs `body` on the user's records under an exclusive lock (with a deadline) and saves
    /// what it leaves.
    static func update<R>(uid: UInt32, environment: KeygateEnvironment, _ body: (inout GateRecords) throws -> R) throws -> R {
        try GatekeeperPaths.makeFolder(GatekeeperPaths.recordRoot(environment), mode: 0o700)
        let path = GatekeeperPaths.recordPath(uid: uid, environment)
        let lockFD = SafeFile.openLockFile(GatekeeperPaths.recordLockPath(uid: uid, environment))
        guard lockFD >= 0 else {
            throw KeychainError.notAvailable("the gatekeeper could not open \(path).lock: \(SystemErrno.last.text)")
        }
        defer { Descriptor.close(lockFD) }
        var waited = 0
        while let e = AdvisoryLock.tryExclusive(lockFD) {
            guard e == .wouldBlock, waited < lockDeadlineMilliseconds else {
                throw KeychainError.notAvailable("""
                    the gatekeeper's records for uid \(uid) stayed locked for \(lockDeadlineMilliseconds / 1000) s: try again
                    """)
            }
            Pause.sleep(nanoseconds: 20_000_000, resumingAfterSignal: false)
            waited += 20
        }
        // Under the lock no writer is between this stat and the read: a copy the daemon kept
        // (GateRecordsCache) stands for the file while the file keeps its version.
        let version = FileVersion(path: path)
        var records: GateRecords
        if let version, let kept = GateRecordsCache.lookup(uid: uid, version) {
            records = kept
        } else {
            let boot = currentBootID
            let bytes: [UInt8]?
            do {
                bytes = try AtomicFile.read(path, maxBytes: maxBytes)
            } catch let error as KeychainError {
                // Fail closed: a records file that is there but cannot be read would forget the counter and the lockout.
                throw KeychainError.notAvailable("""
                    the gatekeeper could not read its records for uid \(uid) (\(path)): \(error.message); an administrator can \
                    remove the file (the windows and the failure count start again)
                    """)
            }
            records = bytes.map { decode($0, bootID: boot) } ?? GateRecords(bootID: boot)
            GateRecordsCache.store(uid: uid, version, records)
        }
        let before = records
        records.prune(now: now)
        let result = try body(&records)
        if records != before {
            try AtomicFile.write(records.encoded(), to: path, mode: 0o600)
            GateRecordsCache.store(uid: uid, FileVersion(path: path), records)
        }
        return result
    }
}
