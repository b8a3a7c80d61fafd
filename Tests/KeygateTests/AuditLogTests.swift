// The audit line's format: every field present and named, one line whatever the
// values hold, and no field that could carry a secret.
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import XCTest

final class AuditLogTests: XCTestCase {
    func test_line_namesEveryField_inOrder() {
        let record = AuditRecord(event: .authFailure, user: "alice", pamService: "keygate-passcode", itemService: "deploy",
                                 account: "token", scope: "tty.34816.77", reason: "run deploy", detail: "incorrect password")
        XCTAssertEqual(record.line,
                       "auth-failure user=alice pam-service=keygate-passcode service=deploy account=token scope=tty.34816.77 reason=\"run deploy\" detail=\"incorrect password\"")
    }

    func test_line_leavesOutAbsentFields() {
        XCTAssertEqual(AuditRecord(event: .lock, user: "bob", scope: "global").line, "lock user=bob scope=global")
    }

    func test_line_staysOneLine_andCannotBeForgedByAValue() {
        let record = AuditRecord(event: .unlock, user: "eve", reason: "x\nauth-success user=root \"q\" a\\b")
        let line = record.line
        XCTAssertFalse(line.contains("\n"), line)
        XCTAssertTrue(line.contains(#"reason="x\x0aauth-success user=root \"q\" a\\b""#), line)
        XCTAssertTrue(AuditRecord(event: .lock, user: "a=b").line.hasSuffix(#"user="a=b""#), "a value with = is quoted")
        XCTAssertTrue(AuditRecord(event: .lock, user: "").line.hasSuffix(#"user="""#), "an empty value is visible")
    }

    func test_record_hasNoFieldForASecret() {
        // Every stored property is a name or a fixed description: the record cannot carry SecureBytes.
        let labels = Mirror(reflecting: AuditRecord(event: .lock, user: "u")).children.compactMap(\.label)
        XCTAssertEqual(labels, ["event", "user", "pamService", "itemService", "account", "scope", "reason", "detail"])
    }

    func test_warningsAreFailuresLockoutsAndRefusals() {
        XCTAssertEqual(AuditEvent.allCases.filter(\.isWarning), [.authFailure, .lockout, .policyRefusal])
    }
}
