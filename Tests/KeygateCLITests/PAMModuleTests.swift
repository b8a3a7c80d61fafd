// pam_keygate.so as the system loads it: the built module (make pam), real libpam
// through a C driver (Tests/PAMDriver, so the module's Swift runtime is the only one
// in the process), real pam_unix, a real user whose keychain the real CLI created,
// and the user's real kernel keyring. The driver runs as root, like login or sshd.
import Foundation
import KeygateTestSupport
import XCTest

final class PAMModuleTests: XCTestCase {
    static var modulePath: String {
        ProcessInfo.processInfo.environment["KEYGATE_PAM_MODULE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? PackagePaths.root + "/.build/pam/pam_keygate.so"
    }

    func test_module_exportsOnlyPamSmFunctions_andNeedsNothingFromTheToolchain() throws {
        try requireModule()
        let nm = try Subprocess.run(["nm", "-D", "--defined-only", "--extern-only", Self.modulePath])
        XCTAssertEqual(nm.status, 0, nm.err)
        let names = nm.out.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
        XCTAssertEqual(Set(names), ["pam_sm_authenticate", "pam_sm_setcred", "pam_sm_open_session",
                                    "pam_sm_close_session", "pam_sm_chauthtok"])
        let ldd = try Subprocess.run(["ldd", Self.modulePath])
        XCTAssertEqual(ldd.status, 0, ldd.err)
        XCTAssertFalse(ldd.out.contains("/opt/swift") || ldd.out.contains("swift"), ldd.out)
        XCTAssertFalse(ldd.out.contains("not found"), ldd.out)
        XCTAssertFalse(ldd.out.contains("libsecret") || ldd.out.contains("glib"), ldd.out)
    }

    func test_login_unlocks_getDoesNotPrompt_andLastLogoutLocks() throws {
        let (h, stack) = try userWithKeychain()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let prompts = try h.promptCount()
        let open = try h.run("keygate status; keygate get -s svc -a a", askpass: false)
        XCTAssertTrue(open.out.contains("state: unlocked"), open.summary)
        XCTAssertTrue(open.out.contains("s1"), open.summary)
        XCTAssertEqual(try h.promptCount(), prompts, "a read after login must not prompt")

        try session.proceed()
        XCTAssertEqual(try session.result(of: "close"), 0)
        let closed = try h.run("keygate status", askpass: false)
        XCTAssertTrue(closed.out.contains("state: locked"), closed.summary)
    }

    func test_overlappingSessions_keepTheKeyUntilTheLastCloses() throws {
        let (h, stack) = try userWithKeychain()
        let first = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try first.result(of: "open"), 0)
        let second = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try second.result(of: "open"), 0)

        try first.proceed()
        XCTAssertEqual(try first.result(of: "close"), 0)
        let oneLeft = try h.run("keygate status", askpass: false)
        XCTAssertTrue(oneLeft.out.contains("state: unlocked"), oneLeft.summary)

        try second.proceed()
        XCTAssertEqual(try second.result(of: "close"), 0)
        let none = try h.run("keygate status", askpass: false)
        XCTAssertTrue(none.out.contains("state: locked"), none.summary)
    }

    func test_wrongPassword_moduleIgnores_andTheKeychainStaysLocked() throws {
        let (h, _) = try userWithKeychain()
        // The stack's result is 0 only if pam_keygate.so answered PAM_IGNORE in both
        // phases: success is turned into a failure and any other code ends the stack.
        let stack = try Stack(h, """
        auth optional pam_unix.so
        auth [ignore=ignore success=bad default=die] \(Self.modulePath) debug
        auth required pam_permit.so
        session [ignore=ignore success=bad default=die] \(Self.modulePath) debug
        session required pam_permit.so
        """)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: "not-" + h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let status = try h.run("keygate status", askpass: false)
        XCTAssertTrue(status.out.contains("state: locked"), status.summary)
    }

    func test_passwordChange_rewrapsTheLoginProtector_soTheNewPasswordUnlocks() throws {
        let (h, stack) = try userWithKeychain()
        let newPassword = "N3w-" + UUID().uuidString
        // As `passwd` run by the user: real uid the user's, effective uid root.
        let change = try PAMDriver(stack: stack, user: h.user, steps: ["passwd"], password: h.user.password,
                                   newPassword: newPassword, ruid: h.user.uid)
        XCTAssertEqual(try change.result(of: "passwd"), 0)
        try h.answerWith(newPassword)
        let r = try h.run("keygate lock; keygate get -s svc -a a")
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertTrue(r.out.contains("s1"), r.summary)
    }

    // MARK: - Helpers

    private func requireModule() throws {
        try Requirement.require(FileManager.default.fileExists(atPath: Self.modulePath),
                                "the built PAM module at \(Self.modulePath) (run make pam)")
    }

    /// A user whose keychain the CLI created (holding item svc/a = "s1") and then locked,
    /// and a login stack: pam_unix decides, pam_keygate.so follows.
    private func userWithKeychain() throws -> (CLIUserHarness, Stack) {
        try requireModule()
        let h = try CLIUserHarness()
        let made = try h.run("printf %s s1 | keygate add -s svc -a a && keygate lock")
        XCTAssertEqual(made.status, 0, made.summary)
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(Self.modulePath) debug
        account required pam_unix.so
        session required pam_permit.so
        session optional \(Self.modulePath) debug
        password required pam_unix.so
        password optional \(Self.modulePath) debug
        """)
        addTeardownBlock { _ = try? FileManager.default.removeItem(atPath: "/run/keygate/\(h.user.uid).sessions") }
        return (h, stack)
    }
}

/// A PAM service file "login-test" in the harness's temporary folder.
struct Stack {
    let confdir: String
    let service = "login-test"
    init(_ h: CLIUserHarness, _ text: String) throws {
        confdir = h.confdir
        try (text + "\n").write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
    }
}

/// One running pam-driver: a PAM transaction whose steps the test reads one by one
/// and releases at each `wait`.
final class PAMDriver {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = ""

    init(stack: Stack, user: TestUser, steps: [String], password: String, newPassword: String = "",
         ruid: UInt32? = nil) throws {
        process.executableURL = URL(fileURLWithPath: try Self.binary())
        process.arguments = (ruid.map { ["--ruid", String($0)] } ?? []) + [stack.confdir, stack.service, user.name] + steps
        process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PAM_DRIVER_PASSWORD": password,
                               "PAM_DRIVER_NEW_PASSWORD": newPassword]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
    }

    /// The status the driver printed for `step` (reading its output up to there).
    func result(of step: String) throws -> Int32? {
        while true {
            if let newline = buffered.firstIndex(of: "\n") {
                let line = buffered[..<newline]
                buffered = String(buffered[buffered.index(after: newline)...])
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == step { return Int32(parts[1]) }
                continue
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }  // the driver ended before that step
            buffered += String(decoding: data, as: UTF8.self)
        }
    }

    /// Lets the driver past its next `wait`.
    func proceed() throws {
        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
    }

    /// Compiles Tests/PAMDriver/pam-driver.c once per test process.
    static func binary() throws -> String {
        try compiled.get()
    }

    private static let compiled: Result<String, any Error> = Result {
        let out = NSTemporaryDirectory() + "keygate-pam-driver-\(getpid())"
        let cc = try Subprocess.run(["cc", "-O", "-Wall", "-o", out, PackagePaths.root + "/Tests/PAMDriver/pam-driver.c", "-lpam"])
        guard cc.status == 0 else { throw DriverBuildError(description: "cannot compile the PAM driver: \(cc.err)") }
        return out
    }
}

struct DriverBuildError: Error, CustomStringConvertible {
    let description: String
}
