// The pool of test users the CLI suites share (TestUserPool): an account comes back from a
// borrower with nothing of that borrower left (home, kernel keyring, processes, root's gate
// state, password), so that the next test starts as if the account were new.
import Foundation
import KeygateTestSupport
import XCTest

final class TestUserPoolTests: XCTestCase {
    func test_givenBackUser_isResetForTheNextBorrower() throws {
        try Requirement.require(Requirement.isRoot, "root, to create a test user (CI runs as root)")
        let user = try TestUserPool.borrow()
        let password = user.password
        // Leave state behind: a file in the home, a key under @u, a lingering process, gate state,
        // and a login password changed behind TestUser's back (as a PAM password change does).
        let left = try UserSession.run(as: user, script: """
            echo left > "$HOME/leftover"; mkdir -p "$HOME/.local/share/keygate"
            keyctl add user leftover-key secret @u >/dev/null; echo key=$?
            """)
        XCTAssertEqual(left.values["key"], "0", left.summary)
        // A process left running, holding none of our descriptors (else Process would wait for it).
        let detach = "import os; fd = os.open('/dev/null', os.O_RDWR); [os.dup2(fd, n) for n in (0, 1, 2)]; "
            + "os.closerange(3, 65536); os.execvp('sleep', ['sleep', '300'])"
        let lingering = try Subprocess.run(["runuser", "-u", user.name, "--", "setsid", "-f", "python3", "-c", detach],
                                           environment: TestUser.systemEnvironment)
        XCTAssertEqual(lingering.status, 0, lingering.err)
        let gateRecord = "/run/keygate/ts/\(user.uid)"
        try FileManager.default.createDirectory(atPath: "/run/keygate/ts", withIntermediateDirectories: true)
        try Data("x".utf8).write(to: URL(fileURLWithPath: gateRecord))
        _ = try Subprocess.run(["chpasswd"], stdin: Data("\(user.name):changed-behind-its-back\n".utf8),
                               environment: TestUser.systemEnvironment)

        TestUserPool.giveBack(user)
        let again = try TestUserPool.borrow()
        defer { TestUserPool.giveBack(again) }

        XCTAssertTrue(again === user, "the pool lends the same account again")
        XCTAssertEqual(again.password, password)
        XCTAssertFalse(FileManager.default.fileExists(atPath: user.home + "/leftover"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: user.home + "/.local/share/keygate"))
        XCTAssertTrue(FileManager.default.fileExists(atPath: user.home), "the home is there, empty of the last test")
        XCTAssertFalse(FileManager.default.fileExists(atPath: gateRecord), "root's gate state of the uid is gone")
        // Killed processes nobody reaps stay as zombies (state Z): none that can still run is left.
        let pgrep = try Subprocess.run(["pgrep", "-U", String(user.uid), "-r", "RSDT"], environment: TestUser.systemEnvironment)
        XCTAssertNotEqual(pgrep.status, 0, "no process of the user survives: \(pgrep.out)")
        let now = try UserSession.run(as: user, script: "keyctl search @u user leftover-key >/dev/null 2>&1; echo search=$?")
        XCTAssertEqual(now.values["search"], "1", "the user keyring is empty: \(now.summary)")
        // The recorded password is the login password again (the shadow hash matches it).
        let shadow = try String(contentsOfFile: "/etc/shadow", encoding: .utf8)
        let hash = shadow.split(separator: "\n").first { $0.hasPrefix(user.name + ":") }?.split(separator: ":")[1] ?? ""
        XCTAssertTrue(hash.hasPrefix("$"), "a password hash is set")
        let check = try Subprocess.run(["python3", "-c", "import crypt,sys; print(crypt.crypt(sys.argv[1], sys.argv[2]) == sys.argv[2])",
                                        password, String(hash)], environment: TestUser.systemEnvironment)
        XCTAssertEqual(check.out.trimmingCharacters(in: .whitespacesAndNewlines), "True", "the recorded password is the login password again: \(check.err)")
    }
}
