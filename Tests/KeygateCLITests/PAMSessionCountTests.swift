// pam_keygate.so counts a user's sessions itself (Sources/PAMKeygateModule/SessionFile.swift),
// locks at the last close itself (SessionUser.lockWithoutTheHelper) and starts
// keygate-pam-helper only when there is work it cannot do: the unlock at auth, an open whose
// keychain is still locked, and a lock whose line it cannot keep in root's audit record. The built module and
// helper, real libpam and pam_unix through Tests/PAMDriver, real users and kernel keyrings,
// and /run/keygate as root leaves it. Which helper phases ran is recorded by a wrapper that
// reads the request's first two lines (never the password), writes the phase to a file and
// hands the whole request on to the real helper.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class PAMSessionCountTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow

    /// One login: auth starts the helper, open finds the keychain unlocked and starts none,
    /// the last close locks without it.
    func test_aLogin_startsTheHelperAtAuthOnly() throws {
        let (h, stack, phases) = try userWithKeychain()
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        XCTAssertEqual(try phases(), ["auth"], "an open on an unlocked keychain starts no helper")
        XCTAssertEqual(try counted(h), 1, "the module counted the session")
        try h.assertKeychain(.unlocked)
        try session.logOut()
        XCTAssertEqual(try phases(), ["auth"], "the last close locks without the helper")
        XCTAssertEqual(try counted(h), 0)
        try h.assertKeychain(.locked)
        let lines = log.lines().joined(separator: "\n")
        XCTAssertTrue(lines.contains("session opened for \(h.user.name): 1 open; the keychain was unlocked at auth"), lines)
        XCTAssertTrue(lines.contains("locked the keychain of \(h.user.name): last session closed"), lines)
    }

    /// auth's unlock is remembered on the PAM handle: open_session in the same transaction does
    /// not fork a child to look in the keyring; an open in another transaction (sshd's case) looks.
    /// The helper's "unlocked UID" line is for the module only, never passed to syslog.
    func test_anOpenAfterAuthInTheSameTransaction_needsNoLook_anotherTransactionLooks() throws {
        let (h, stack, phases) = try userWithKeychain()
        let firstLog = try SyslogCapture()
        let first = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                  password: h.user.password, log: firstLog)
        XCTAssertEqual(try first.result(of: "open"), 0)
        let secondLog = try SyslogCapture()
        let second = try PAMDriver(stack: stack, user: h.user, steps: ["open", "wait", "close"], password: h.user.password,
                                   log: secondLog)
        XCTAssertEqual(try second.result(of: "open"), 0)
        XCTAssertEqual(try phases(), ["auth"], "neither open started the helper")
        let firstLines = firstLog.lines().joined(separator: "\n"), secondLines = secondLog.lines().joined(separator: "\n")
        XCTAssertTrue(firstLines.contains("session opened for \(h.user.name): 1 open; the keychain was unlocked at auth"), firstLines)
        XCTAssertTrue(secondLines.contains("session opened for \(h.user.name): 2 open; the keychain is unlocked"), secondLines)
        XCTAssertFalse(secondLines.contains("unlocked at auth"), secondLines)
        XCTAssertFalse(firstLog.lines().contains { $0.hasSuffix("unlocked \(h.user.uid)") }, "the mark line reached syslog: \(firstLines)")
        for driver in [first, second] {
            try driver.logOut()
        }
        try h.assertKeychain(.locked, "the last close locked")
    }

    /// Two sessions: closing one starts no helper and the keychain stays open; closing the
    /// last locks it.
    func test_twoSessions_closingOneKeepsItOpen_theLastLocks() throws {
        let (h, stack, phases) = try userWithKeychain()
        let first = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try first.result(of: "open"), 0)
        let second = try PAMDriver(stack: stack, user: h.user, steps: ["open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try second.result(of: "open"), 0)
        XCTAssertEqual(try counted(h), 2)
        XCTAssertEqual(try phases(), ["auth"], "the second open found the keychain unlocked: no helper")

        try first.logOut()
        XCTAssertEqual(try counted(h), 1)
        XCTAssertEqual(try phases(), ["auth"], "a close that is not the last starts no helper")
        try h.assertKeychain(.unlocked)

        try second.logOut()
        XCTAssertEqual(try phases(), ["auth"])
        try h.assertKeychain(.locked)
    }

    /// An open on a locked keychain (no password at auth: an SSH key, cron) starts the helper's
    /// "unlock" phase, which says why it stays locked and does not count the session again; the
    /// close finds nothing to lock and starts nothing.
    func test_anOpenOnALockedKeychain_startsTheUnlockPhase_andCountsOnce() throws {
        let (h, stack, phases) = try userWithKeychain()
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["tty=/dev/pts/9", "open", "wait", "close"],
                                    password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "open"), 0)
        XCTAssertEqual(try phases(), ["unlock"])
        XCTAssertEqual(try counted(h), 1, "counted once, by the module")
        try session.logOut()
        XCTAssertEqual(try phases(), ["unlock"])
        XCTAssertTrue(log.lines().contains { $0.contains("no password was captured at auth for \(h.user.name)") },
                      log.lines().joined(separator: "\n"))
    }

    /// A login killed before close_session: the next login's close drops its line and is the
    /// last one, so it locks.
    func test_aKilledSession_isDropped_andTheNextLogoutLocks() throws {
        let (h, stack, phases) = try userWithKeychain()
        let killed = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try killed.result(of: "open"), 0)
        XCTAssertEqual(try counted(h), 1)
        killed.kill()
        let normal = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try normal.result(of: "open"), 0)
        XCTAssertEqual(try counted(h), 1, "the killed session's line was dropped at this open")
        try normal.logOut()
        XCTAssertEqual(try phases(), ["auth", "auth"])
        try h.assertKeychain(.locked)
    }

    /// What a damaged or planted count file holds is never taken for a session: garbage, a
    /// dead process, a live process with another start time (a reused pid), numbers too large
    /// and a line of our own format with a sign. One login counts one, and its close locks.
    func test_aHostileCountFile_countsNoStranger_andTheLogoutLocks() throws {
        let (h, stack, phases) = try userWithKeychain()
        let path = "/run/keygate/\(h.user.uid).sessions"
        let init1 = try String(contentsOfFile: "/proc/1/stat", encoding: .utf8)
        let start1 = try XCTUnwrap(init1.split(separator: ")").last?.split(separator: " ").dropFirst(19).first)
        try FileManager.default.createDirectory(atPath: "/run/keygate", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let planted = """
            garbage line
            999999999 12345
            1 \(UInt64(start1).map { $0 + 1 } ?? 7)
            +1 \(start1)
            1 \(start1) extra
            -5 10
            4294967297 \(start1)
            1 99999999999999999999999
            \u{0}\u{1}\u{2}
            """
        try planted.write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(path, 0o600), 0)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 1, "only this login: \(lines)")
        try session.logOut()
        XCTAssertEqual(try phases(), ["auth"])
        try h.assertKeychain(.locked)
    }

    /// A count file that is a link, a user's file or a FIFO is neither followed, read nor
    /// rewritten by the module: the helper is asked instead (its "open" and "close" phases),
    /// refuses it too and logs why, and the login goes on.
    func test_aCountFileThatIsNotRootsRegularFile_isRefused_andTheLoginGoesOn() throws {
        let (h, stack, phases) = try userWithKeychain()
        let path = "/run/keygate/\(h.user.uid).sessions"
        try FileManager.default.createDirectory(atPath: "/run/keygate", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let target = NSTemporaryDirectory() + "kg-count-target-" + UUID().uuidString.prefix(8)
        try "precious\n".write(toFile: target, atomically: false, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: target) }
        let plants: [(String, () throws -> Void)] = [
            ("a symbolic link", { try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target) }),
            ("the user's file", {
                try "".write(toFile: path, atomically: false, encoding: .utf8)
                XCTAssertEqual(chown(path, h.user.uid, getpwnam(h.user.name)?.pointee.pw_gid ?? h.user.uid), 0)
            }),
            ("a FIFO", { XCTAssertEqual(mkfifo(path, 0o600), 0) }),
        ]
        var expected: [String] = []
        for (what, plant) in plants {
            _ = unlink(path)
            try plant()
            let log = try SyslogCapture()
            let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: h.user.password, log: log)
            try session.assertAnswered(["auth", "open", "close"], what)
            session.finish()
            expected += ["auth", "open", "close"]
            XCTAssertEqual(try phases(), expected, "\(what): the helper was asked to count")
            XCTAssertTrue(log.lines().contains { $0.contains("could not count the session of \(h.user.name)") },
                          "\(what): \(log.lines().joined(separator: "\n"))")
        }
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "precious\n", "the link's target is untouched")
        _ = unlink(path)
    }

    /// `unlock_only`: the last close starts no helper and the keychain stays unlocked until
    /// its timeout; a uid below min_uid is left alone without a helper.
    func test_unlockOnly_andMinUID_startNoHelperAtClose() throws {
        let (h, _, phases) = try userWithKeychain()
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug
        account required pam_unix.so
        session required pam_permit.so
        session optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug unlock_only
        """)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: h.user.password)
        XCTAssertEqual(try session.result(of: "close"), 0)
        session.finish()
        XCTAssertEqual(try phases(), ["auth"])
        try h.assertKeychain(.unlocked)

        let high = try Stack(h, """
        auth required pam_unix.so
        account required pam_unix.so
        session required pam_permit.so
        session optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug min_uid=\(h.user.uid + 1)
        """)
        let ignored = try PAMDriver(stack: high, user: h.user, steps: ["open", "close"], password: h.user.password)
        XCTAssertEqual(try ignored.result(of: "close"), 0)
        ignored.finish()
        XCTAssertEqual(try phases(), ["auth"], "below min_uid: no helper, no count")
        XCTAssertEqual(try counted(h), 0)
    }

    /// The real su (util-linux), with the module in /etc/pam.d/su (bound over it in a private
    /// mount namespace): the password typed to su unlocks at auth, the session is counted
    /// under su's own process (the one that later closes it, after the shell ends), no helper
    /// starts at open, and the shell's end locks.
    func test_su_unlocksAtAuth_countsSusProcess_andTheShellsEndLocks() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/bin/su"), "su (util-linux)")
        let (h, _, phases) = try userWithKeychain()
        let folder = NSTemporaryDirectory() + "kg-su-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        try """
        auth required pam_unix.so
        auth optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug
        account required pam_unix.so
        session required pam_permit.so
        session optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug
        """.write(toFile: folder + "/pam-su", atomically: true, encoding: .utf8)
        let log = try SyslogCapture()
        let su = Process()
        let input = Pipe()
        su.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        // su reads the password from its standard input (no terminal), then its shell waits for a line.
        su.arguments = ["-m", "--propagation", "private", PackagePaths.root + "/Tests/PAMDriver/with-log-socket.sh",
                        log.folder, "/bin/su", h.user.name, "-c", "read line"]
        su.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "KEYGATE_TEST_PAM_SU": folder + "/pam-su"]
        su.standardInput = input
        su.standardOutput = FileHandle.nullDevice
        su.standardError = FileHandle.nullDevice   // its "Password:" prompt
        try su.run()
        defer { if su.isRunning { su.terminate() } }
        try input.fileHandleForWriting.write(contentsOf: Data((h.user.password + "\n").utf8))
        var lines: [Substring] = []
        for _ in 0..<100 where lines.isEmpty {
            Thread.sleep(forTimeInterval: 0.1)
            lines = ((try? String(contentsOfFile: "/run/keygate/\(h.user.uid).sessions", encoding: .utf8)) ?? "").split(separator: "\n")
        }
        XCTAssertEqual(lines.count, 1, "\(lines) \(log.lines())")
        XCTAssertEqual(lines.first?.split(separator: " ").first.map(String.init), String(su.processIdentifier),
                       "the session is su's own process (unshare and the script exec it)")
        XCTAssertEqual(try phases(), ["auth"])
        try h.assertKeychain(.unlocked)

        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
        su.waitUntilExit()
        XCTAssertEqual(su.terminationStatus, 0)
        XCTAssertEqual(try phases(), ["auth"])
        XCTAssertEqual(try counted(h), 0)
        try h.assertKeychain(.locked)
        XCTAssertTrue(log.lines().contains { $0.contains("pam_keygate(su:session): session opened for \(h.user.name)") },
                      log.lines().joined(separator: "\n"))
    }

    // MARK: - The lock at the last close, in the module

    /// The last close locks without the helper: a forked child of the module drops the master
    /// key and Keygate 1.x's device key from the user's kernel keyring (the device key is
    /// planted as an older login left it), and the notice goes to syslog and to root's audit
    /// record, as the helper wrote it. The record is a folder of the test's own, bound over
    /// /var/log/keygate for the driver only.
    func test_theLastClose_locksWithoutTheHelper_theKeysLeaveTheKeyring_andTheLineIsKept() throws {
        let (h, stack, phases) = try userWithKeychain()
        let record = try recordFolder()
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password, log: log, auditFolder: record)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let uid = h.user.uid
        let planted = try h.run("""
            keyctl add user keygate:\(uid):device x @u >/dev/null && keyctl search @u user keygate:\(uid):master >/dev/null && echo both
            """, askpass: false)
        XCTAssertTrue(planted.out.contains("both"), "the login cached the master key, and the device key is planted: \(planted.summary)")
        try session.logOut()

        XCTAssertEqual(try phases(), ["auth"], "the last close started no helper")
        XCTAssertEqual(try keptKeys(h), [], "the master and device keys left the user's keyring")
        try h.assertKeychain(.locked)
        XCTAssertTrue(log.lines().contains { $0.contains("pam_keygate(login-test:session): locked the keychain of \(h.user.name): last session closed") },
                      log.lines().joined(separator: "\n"))
        let lines = try lockLines(record, h)
        XCTAssertEqual(lines.count, 1, "one line for one lock: \(lines)")
        try assertRecordLine(lines.first, h)
        let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: record + "/gatekeeper.log")[.posixPermissions] as? NSNumber)
        XCTAssertEqual(mode.intValue & 0o777, 0o600, "the record stays root's alone")
    }

    /// Where the module cannot keep the lock's line as root's record keeps it, it locks
    /// nothing itself and starts the helper's "lock" phase, which does all of it: a record due
    /// for rotation (the helper rotates it and writes the same line), and a record that is a
    /// link (neither follows it; its target is untouched). The keys leave the keyring each time.
    func test_theLastClose_whereTheModuleCannotKeepTheLine_leavesTheLockToTheHelper() throws {
        let (h, stack, phases) = try userWithKeychain()
        let target = NSTemporaryDirectory() + "kg-record-target-" + UUID().uuidString.prefix(8)
        try "precious\n".write(toFile: target, atomically: false, encoding: .utf8)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: target) }
        let full = 1 << 20
        let cases: [(String, (String) throws -> Void, (String) throws -> Void)] = [
            ("a record due for rotation", { record in
                let filler = String(repeating: String(repeating: "x", count: 99) + "\n", count: full / 100)
                try (filler + String(repeating: "x", count: full - filler.utf8.count - 11) + "\n").write(
                    toFile: record + "/gatekeeper.log", atomically: false, encoding: .utf8)
                XCTAssertEqual(chmod(record + "/gatekeeper.log", 0o600), 0)
            }, { record in
                let rotated = try FileManager.default.attributesOfItem(atPath: record + "/gatekeeper.log.1")[.size] as? NSNumber
                XCTAssertEqual(rotated?.intValue, full - 10, "the helper rotated the full record")
                let lines = try self.lockLines(record, h)
                XCTAssertEqual(lines.count, 1, "\(lines)")
                try self.assertRecordLine(lines.first, h)
            }),
            ("a record that is a link", { record in
                try FileManager.default.createSymbolicLink(atPath: record + "/gatekeeper.log", withDestinationPath: target)
            }, { _ in
                XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "precious\n", "the link's target is untouched")
            }),
        ]
        var expected: [String] = []
        for (what, plant, check) in cases {
            let record = try recordFolder()
            let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                        password: h.user.password, auditFolder: record)
            XCTAssertEqual(try session.result(of: "open"), 0, what)
            // Planted after auth, whose own line would have rotated the record first.
            _ = unlink(record + "/gatekeeper.log")
            try plant(record)
            try session.logOut(what)
            expected += ["auth", "lock"]
            XCTAssertEqual(try phases(), expected, "\(what): the helper locked")
            XCTAssertEqual(try keptKeys(h), [], what)
            try check(record)
        }
    }

    // MARK: - Helpers

    /// A folder of root's, 0700, as GateAuditFile makes /var/log/keygate, for PAMDriver's `auditFolder`.
    private func recordFolder() throws -> String {
        let folder = NSTemporaryDirectory() + "kg-record-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        return folder
    }

    /// The record's lines about this user's lock at logout.
    private func lockLines(_ record: String, _ h: CLIUserHarness) throws -> [String] {
        let text = try String(contentsOfFile: record + "/gatekeeper.log", encoding: .utf8)
        return text.split(separator: "\n").map(String.init).filter { $0.contains("locked the keychain of \(h.user.name):") }
    }

    /// The line GateAuditFile writes for the helper's notice: the time, then its fields.
    private func assertRecordLine(_ line: String?, _ h: CLIUserHarness, file: StaticString = #filePath, line number: UInt = #line) throws {
        let line = try XCTUnwrap(line, file: file, line: number)
        let pattern = #"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z "#
        XCTAssertNotNil(line.range(of: pattern, options: .regularExpression), line, file: file, line: number)
        XCTAssertEqual(String(line.dropFirst(21)),
                       #"source=pam_keygate priority=notice message="locked the keychain of "# + h.user.name + #": last session closed""#,
                       file: file, line: number)
    }

    /// Which of the user's master and device keys are still in their kernel keyring.
    private func keptKeys(_ h: CLIUserHarness) throws -> [String] {
        let uid = h.user.uid
        let found = try h.run("""
            for n in master device; do keyctl search @u user keygate:\(uid):$n >/dev/null 2>&1 && echo kept=$n; done; echo searched
            """, askpass: false)
        XCTAssertTrue(found.out.contains("searched"), found.summary)
        return found.out.split(separator: "\n").filter { $0.hasPrefix("kept=") }.map { String($0.dropFirst(5)) }
    }

    private var wrapper = ""

    /// A user whose keychain the CLI made (item svc/a = "s1") and locked; a stack with the
    /// module (debug) at auth and session whose helper is the recording wrapper; and a function
    /// that reads the phases it ran, in order.
    private func userWithKeychain() throws -> (CLIUserHarness, Stack, () throws -> [String]) {
        try Requirement.require(FileManager.default.fileExists(atPath: PAMModuleTests.modulePath),
                                "the built PAM module at \(PAMModuleTests.modulePath) (run make pam)")
        try Requirement.require(Requirement.isRoot, "root, to run PAM as login does")
        let h = try CLIUserHarness()
        let made = try h.run("printf %s s1 | keygate add -s svc -a a && keygate lock")
        XCTAssertEqual(made.status, 0, made.summary)
        let folder = NSTemporaryDirectory() + "kg-phases-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        wrapper = folder + "/helper"
        try """
        #!/bin/sh
        IFS= read -r magic
        IFS= read -r phase
        printf '%s\\n' "${phase#phase }" >> \(folder)/phases
        { printf '%s\\n%s\\n' "$magic" "$phase"; cat; } | \(PAMModuleTests.helperPath)
        """.write(toFile: wrapper, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(wrapper, 0o755), 0)
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug
        account required pam_unix.so
        session required pam_permit.so
        session optional \(PAMModuleTests.modulePath) helper=\(wrapper) debug
        """)
        let uid = h.user.uid
        addTeardownBlock { _ = unlink("/run/keygate/\(uid).sessions") }
        let phases = { () throws -> [String] in
            guard let text = try? String(contentsOfFile: folder + "/phases", encoding: .utf8) else { return [] }
            return text.split(separator: "\n").map(String.init)
        }
        return (h, stack, phases)
    }

    /// The lines of the user's count file (0 when there is none).
    private func counted(_ h: CLIUserHarness) throws -> Int {
        guard let text = try? String(contentsOfFile: "/run/keygate/\(h.user.uid).sessions", encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").count
    }
}
