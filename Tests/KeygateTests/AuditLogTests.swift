// The audit line's format: every field present and named, one line whatever the
// values hold, and no field that could carry a secret. And AuditLog's backends: every
// record reaches each installed backend (here the in-memory one), in order.
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

    // MARK: backends

    /// Runs `body` with `handlers` installed, then puts the program's backends back.
    private func withBackends(_ handlers: [any AuditLogHandler], _ body: () throws -> Void) rethrows {
        let saved = AuditLog.handlers
        defer { AuditLog.bootstrap(saved) }
        AuditLog.bootstrap(handlers)
        try body()
    }

    func test_record_reachesEveryBackend_inOrder() {
        let first = InMemoryAuditHandler(), second = InMemoryAuditHandler()
        let unlock = AuditRecord(event: .unlock, user: "alice", scope: "global", detail: "master key held for 300 s")
        let failure = AuditRecord(event: .authFailure, user: "alice", pamService: "keygate", detail: "incorrect password")
        withBackends([first, second]) {
            AuditLog.record(unlock)
            AuditLog.record(failure)
        }
        XCTAssertEqual(first.records, [unlock, failure])
        XCTAssertEqual(second.records, [unlock, failure])
        AuditLog.record(AuditRecord(event: .lock, user: "alice"))
        XCTAssertEqual(first.records.count, 2, "a backend taken out gets nothing more")
    }

    func test_record_isNotBuilt_withoutABackend() {
        var built = false
        func make() -> AuditRecord { built = true; return AuditRecord(event: .lock, user: "u") }
        withBackends([]) { AuditLog.record(make()) }
        XCTAssertFalse(built, "no backend, no work")
        let memory = InMemoryAuditHandler()
        withBackends([memory]) { AuditLog.record(make()) }
        XCTAssertTrue(built)
        XCTAssertEqual(memory.records.map(\.line), ["lock user=u"])
    }

    func test_echoToStandardError_addsTheStderrBackend_once_andKeepsTheOthers() {
        let memory = InMemoryAuditHandler()
        withBackends([SyslogAuditHandler(), memory]) {
            XCTAssertFalse(AuditLog.echoToStandardError)
            AuditLog.echoToStandardError = true
            AuditLog.echoToStandardError = true
            XCTAssertTrue(AuditLog.echoToStandardError)
            XCTAssertEqual(AuditLog.handlers.filter { $0 is StandardErrorAuditHandler }.count, 1)
            XCTAssertEqual(AuditLog.handlers.count, 3)
            AuditLog.echoToStandardError = false
            XCTAssertEqual(AuditLog.handlers.count, 2)
            XCTAssertTrue(AuditLog.handlers.contains { $0 is SyslogAuditHandler })
            XCTAssertTrue(AuditLog.handlers.contains { ($0 as? InMemoryAuditHandler) === memory })
        }
    }

    func test_byDefault_recordsGoToSyslogOnly() {
        XCTAssertEqual(AuditLog.handlers.count, 1)
        XCTAssertTrue(AuditLog.handlers.first is SyslogAuditHandler)
    }
}
