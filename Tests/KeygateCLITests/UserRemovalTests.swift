// Removing a user (issue 39, item 12): the gatekeeper's per-uid state, root's, outlives
// the account. `keygate forget-user UID`, run as root after userdel, removes it, so that a
// new account given the same uid inherits nothing: no gate secret, no records, no lockout.
// The built keygate and its gatekeeper, a real test user through real pam_unix, userdel.
import Foundation
import KeygateTestSupport
import XCTest

final class UserRemovalTests: XCTestCase {
    private func forget(_ args: [String]) throws -> ProcessResult {
        try Subprocess.run([PackagePaths.keygateBinary, "forget-user"] + args, environment: TestUser.systemEnvironment, timeout: 30)
    }

    func test_forgetUser_afterUserdel_removesRootsStateOfTheUid_andRefusesALiveAccount() throws {
        let h = try CLIUserHarness()
        let uid = h.user.uid
        let used = try h.run("""
            printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1
            printf 'get=%s\\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(used.values["get"], "g", used.summary)
        let state = ["/var/lib/keygate/gate/\(uid)", "/run/keygate/ts/\(uid)"]
        for path in state { XCTAssertTrue(FileManager.default.fileExists(atPath: path), "the gatekeeper kept \(path)") }

        let live = try forget([String(uid)])
        XCTAssertEqual(live.status, 206, live.summary)
        XCTAssertTrue(live.err.contains("uid \(uid) is still the account \(h.user.name)"), live.summary)
        for path in state { XCTAssertTrue(FileManager.default.fileExists(atPath: path), "nothing removed: \(path)") }

        _ = try Subprocess.run(["pkill", "-KILL", "-U", String(uid)], environment: TestUser.systemEnvironment, timeout: 10)
        let removed = try Subprocess.run(["userdel", "-f", "-r", h.user.name], environment: TestUser.systemEnvironment, timeout: 30)
        XCTAssertTrue(removed.status == 0 || removed.status == 12, removed.summary)   // 12: the mail spool was not there
        let r = try forget([String(uid)])
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertTrue(r.out.contains("removed /var/lib/keygate/gate/\(uid)\n"), r.summary)
        XCTAssertTrue(r.out.contains("removed /run/keygate/ts/\(uid)\n"), r.summary)
        for path in state + ["/run/keygate/ts/\(uid).lock"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "a new account with uid \(uid) inherits nothing: \(path)")
        }
        let again = try forget([String(uid)])
        XCTAssertTrue(again.out.hasPrefix("nothing of uid \(uid) to remove: the gatekeeper kept no state for it\n"), again.summary)
        // Any process still running as the uid (one the pkill above raced with) is named, with what to do.
        let left = again.out.split(separator: "\n").dropFirst()
        XCTAssertTrue(left.allSatisfy { $0.hasPrefix("still running as uid \(uid): ") && $0.hasSuffix("pkill -KILL -u \(uid) before a new account gets uid \(uid)") },
                      again.summary)
        XCTAssertEqual(try forget(["alice"]).status, 2, "a uid is a number")
    }
}
