// A throwaway local account for tests that must run as a real non-root user
// (real pam_unix, a real per-uid kernel keyring, a real gnome-keyring of its
// own). It delegates to the system's useradd, chpasswd, pkill and userdel, so
// it needs root. UserSession runs commands as the user. TestUserPool lends
// accounts to tests that do not interfere, reset between borrowers.
import Foundation

public struct TestUserError: Error, CustomStringConvertible {
    public let description: String
}

/// A throwaway local user with a random name ("kgt" + random) and random password, created with useradd -m
/// and chpasswd (root only), removed with userdel -r (plus killing its processes) by `remove()`.
public final class TestUser: @unchecked Sendable {
    public let name: String
    public let home: String
    public let uid: UInt32

    /// The user's current login password (changed by `changePassword(to:)`).
    public var password: String {
        lock.lock()
        defer { lock.unlock() }
        return currentPassword
    }

    private let lock = NSLock()
    private var currentPassword: String
    private var removed = false

    private init(name: String, password: String, home: String, uid: UInt32) {
        self.name = name
        self.currentPassword = password
        self.home = home
        self.uid = uid
    }

    /// Creates the user with a home folder and a random password. Throws unless running as root.
    /// `uid`: this uid (a removed account's, to test what a new account given it inherits).
    public static func create(uid wanted: UInt32? = nil) throws -> TestUser {
        guard getuid() == 0 else {
            throw TestUserError(description: "TestUser.create needs root (useradd): run the suite as root, as CI does")
        }
        let name = "kgt" + randomString(length: 9, alphabet: "abcdefghijklmnopqrstuvwxyz0123456789")
        let password = randomString(
            length: 24, alphabet: "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789-_.")
        // A random uid in a high range, so that a later test user does not inherit this uid's kernel
        // keyring (the user keyring outlives the account while any process of the uid is left).
        var argv = ["useradd", "-m", "-s", "/bin/bash", "-c", "Keygate test user"]
        if let uid = wanted ?? freeUID() { argv += ["-u", String(uid)] }
        try check(Subprocess.run(argv + [name], environment: systemEnvironment, timeout: 30), "useradd \(name)")

        let user: TestUser
        do {
            guard let entry = getpwnam(name) else {
                throw TestUserError(description: "useradd \(name) succeeded but getpwnam cannot find the user")
            }
            user = TestUser(name: name, password: password,
                            home: String(cString: entry.pointee.pw_dir), uid: entry.pointee.pw_uid)
            try user.setPassword(password)
            try BuiltGatekeeper.makeSetuidRoot()
        } catch {
            _ = try? Subprocess.run(["userdel", "-f", "-r", name], environment: systemEnvironment, timeout: 30)
            throw error
        }
        return user
    }

    /// Sets a new login password (chpasswd). The password goes through stdin, never argv.
    public func changePassword(to newPassword: String) throws {
        try setPassword(newPassword)
        lock.lock()
        currentPassword = newPassword
        lock.unlock()
    }

    /// Kills the user's processes, clears its kernel keyrings and deletes the account and its home.
    /// Safe to call more than once; failures are ignored (a test's teardown must not throw).
    public func remove() {
        lock.lock()
        let wasRemoved = removed
        removed = true
        lock.unlock()
        if wasRemoved { return }
        let env = Self.systemEnvironment
        // Cached keys under @u must not survive into another account that might get this uid.
        _ = try? Subprocess.run(["runuser", "-u", name, "--", "keyctl", "clear", "@u"], environment: env, timeout: 10)
        for _ in 0..<3 {
            _ = try? Subprocess.run(["pkill", "-KILL", "-U", String(uid)], environment: env, timeout: 10)
            if (try? Subprocess.run(["pgrep", "-U", String(uid), "-r", "RSDT"], environment: env, timeout: 10))?
                .status != 0 { break }
            usleep(100_000)
        }
        removeGateState()
        // -f: exited processes nobody reaps (zombies) still carry the uid and would block userdel.
        // userdel fails (status 10) while another useradd/userdel holds /etc/passwd's lock, which
        // parallel test runs do: retry for a while rather than leave the account behind.
        for attempt in 0..<20 {
            let status = (try? Subprocess.run(["userdel", "-f", "-r", name], environment: env, timeout: 30))?.status
            if status == 0 || status == 6 { break }   // 6: no such user (already gone)
            usleep(UInt32(100_000 + 50_000 * attempt))
        }
    }

    deinit { remove() }

    /// Returns the account to the state `create()` left it in, for the next test that borrows it from
    /// TestUserPool: its processes killed, its kernel keyrings cleared, root's gate state of the uid
    /// removed, its home emptied and filled again from /etc/skel, its password set again (a PAM password
    /// change is undone). Throws when any step fails; the pool then removes the account instead.
    func reset() throws {
        let env = Self.systemEnvironment
        try killProcesses()
        for keyring in ["@u", "@us"] {
            try Self.check(Subprocess.run(["runuser", "-u", name, "--", "keyctl", "clear", keyring], environment: env,
                                          timeout: 10), "keyctl clear \(keyring) for \(name)")
        }
        try killProcesses()   // the keyctl runs were processes of the user too
        removeGateState()
        let fm = FileManager.default
        for entry in try fm.contentsOfDirectory(atPath: home) {
            try fm.removeItem(atPath: home + "/" + entry)
        }
        try Self.check(Subprocess.run(["cp", "-a", "/etc/skel/.", home + "/"], environment: env, timeout: 10),
                       "cp /etc/skel to \(home)")
        try Self.check(Subprocess.run(["chown", "-R", "\(name):", home], environment: env, timeout: 10), "chown \(home)")
        try setPassword(password)
    }

    /// Kills every process of the uid and waits until none is left (zombies aside).
    private func killProcesses() throws {
        let env = Self.systemEnvironment
        for _ in 0..<50 {
            _ = try? Subprocess.run(["pkill", "-KILL", "-U", String(uid)], environment: env, timeout: 10)
            if (try? Subprocess.run(["pgrep", "-U", String(uid), "-r", "RSDT"], environment: env, timeout: 10))?
                .status != 0 { return }
            usleep(20_000)
        }
        throw TestUserError(description: "processes of \(name) survive SIGKILL")
    }

    /// Root's gate state of the uid (docs/GATEKEEPER.md), as an administrator's userdel should.
    private func removeGateState() {
        for path in ["/var/lib/keygate/gate/\(uid)", "/run/keygate/ts/\(uid)", "/run/keygate/ts/\(uid).lock"] {
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    private func setPassword(_ newPassword: String) throws {
        try Self.check(Subprocess.run(["chpasswd"], stdin: Data("\(name):\(newPassword)\n".utf8),
                                      environment: Self.systemEnvironment, timeout: 30), "chpasswd for \(name)")
    }

    public static let systemEnvironment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]

    private static func check(_ result: ProcessResult, _ what: String) throws {
        guard result.status == 0 else {
            throw TestUserError(description: "\(what) failed with status \(result.status): \(result.err)")
        }
    }

    private static func freeUID() -> UInt32? {
        for _ in 0..<50 {
            let candidate = UInt32.random(in: 20_000...59_000)
            if getpwuid(candidate) == nil && getgrgid(candidate) == nil { return candidate }
        }
        return nil
    }

    private static func randomString(length: Int, alphabet: String) -> String {
        let characters = Array(alphabet)
        var generator = SystemRandomNumberGenerator()
        return String((0..<length).map { _ in characters[Int.random(in: 0..<characters.count, using: &generator)] })
    }
}

/// Test users lent to tests that do not interfere with each other, so that a suite does not create and
/// delete an account per test. A borrowed account is reset (`TestUser.reset`) when it comes back, and
/// every pooled account is removed when the test process exits. Tests that change the login password,
/// lock the user out or kill the user's processes take an account of their own (`TestUser.create`).
public enum TestUserPool {
    /// An account from the pool, or a new one when the pool is empty.
    public static func borrow() throws -> TestUser {
        if let user = idle.withLock({ $0.popLast() }) {
            try BuiltGatekeeper.makeSetuidRoot()
            return user
        }
        let user = try TestUser.create()
        registerCleanup()
        all.withLock { $0.append(user) }
        return user
    }

    /// Takes the account back, reset for the next borrower; one that cannot be reset is removed.
    public static func giveBack(_ user: TestUser) {
        do {
            try user.reset()
            idle.withLock { $0.append(user) }
        } catch {
            user.remove()
        }
    }

    private static let idle = LockedValue<[TestUser]>([])
    private static let all = LockedValue<[TestUser]>([])
    private static let cleanupRegistered = LockedValue(false)

    private static func registerCleanup() {
        let first = cleanupRegistered.withLock { registered in
            defer { registered = true }
            return !registered
        }
        if first { atexit { TestUserPool.removeAll() } }
    }

    private static func removeAll() {
        for user in all.withLock({ $0 }) { user.remove() }
    }
}

