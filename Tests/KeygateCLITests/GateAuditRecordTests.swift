// The gatekeeper's own audit record (issue 39, 4): root appends each decision to
// /var/log/keygate/gatekeeper.log whatever syslog does. Real processes of a fresh user, the built
// (or installed) keygate and its gatekeeper setuid root, real pam_unix, run inside a mount
// namespace where /dev/log is covered by /dev/null, so that nothing listens for syslog(3) even
// on a host that has a syslog daemon (this test machine has none). Then the same user tries to
// read, write, truncate, replace and remove the record.
import Foundation
import KeygateTestSupport
import XCTest

final class GateAuditRecordTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    static let log = "/var/log/keygate/gatekeeper.log"

    /// Runs the user's session with no syslog listener: /dev/log (when there is one) is /dev/null.
    static let noSyslog = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                           "if [ -e /dev/log ] || [ -L /dev/log ]; then mount --bind /dev/null /dev/log || exit 97; fi; exec \"$@\"",
                           "no-syslog"]

    /// The record's lines about `uid`.
    private func lines(uid: UInt32) -> [String] {
        let text = (try? String(contentsOfFile: Self.log, encoding: .utf8)) ?? ""
        let previous = (try? String(contentsOfFile: Self.log + ".1", encoding: .utf8)) ?? ""
        return (previous + text).split(separator: "\n").map(String.init).filter { $0.contains(" uid=\(uid) ") }
    }

    func test_withNoSyslogListener_theRecordHasEachDecision_andTheUserCannotTouchIt() throws {
        let h = try CLIUserHarness()
        let r = try h.run("""
            keygate doctor --json 2>/dev/null | tr '{' '\\n' | grep '"audit-log"' | grep -o '"status":"[A-Z]*"'
            keygate init >/dev/null 2>&1; echo init=$?
            printf %s 'audit-secret' | keygate add -s audited -a alice --access user-presence 2>/dev/null; echo add=$?
            keygate lock; echo lock=$?
            printf 'wrong-password\\n' > "$HOME/queue"
            keygate get -s audited -a alice >/dev/null 2>&1; echo get=$?
            keygate get -s audited -a alice >/dev/null 2>&1; echo again=$?
            keygate validate 2>/dev/null; echo validate=$?
            """, wrapper: Self.noSyslog)
        XCTAssertTrue(r.out.contains("\"status\":\"WARN\""), "doctor: nothing listens on /dev/log in here: \(r.summary)")
        for step in ["init", "add", "lock", "get", "again", "validate"] {
            XCTAssertEqual(r.values[step], "0", "\(step): \(r.summary)")
        }
        let record = lines(uid: h.user.uid)
        let all = record.joined(separator: "\n")
        func has(_ fields: String..., file: StaticString = #filePath, line: UInt = #line) {
            XCTAssertTrue(record.contains { l in fields.allSatisfy { l.contains($0) } }, "no line with \(fields) in:\n\(all)",
                          file: file, line: line)
        }
        has("user=\(h.user.name)", "op=lock ", "result=granted")
        has("event=auth-failure", "pam-service=keygate", "detail=\"incorrect password\"")
        has("event=auth-success", "pam-service=keygate")
        has("op=open ", "result=granted", "basis=password", "service=audited", "account=alice", "scope=")
        has("op=open ", "result=granted", "basis=window", "service=audited")
        has("op=validate ", "result=granted", "basis=window")
        XCTAssertFalse(all.contains("audit-secret") || all.contains("wrong-password") || all.contains(h.user.password),
                       "never a secret:\n\(all)")
        let first = try XCTUnwrap(record.first)
        XCTAssertNotNil(first.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ uid="#, options: .regularExpression), first)

        // Root's, and out of the user's reach.
        var folder = stat(), file = stat()
        XCTAssertEqual(lstat("/var/log/keygate", &folder), 0)
        XCTAssertEqual(lstat(Self.log, &file), 0)
        XCTAssertEqual([folder.st_uid, file.st_uid], [0, 0])
        XCTAssertEqual(folder.st_mode & 0o7777, 0o700)
        XCTAssertEqual(file.st_mode & 0o7777, 0o600)
        let before = lines(uid: h.user.uid).count
        let attack = try h.run("""
            cat \(Self.log) >/dev/null 2>&1; echo read=$?
            printf 'forged uid=\(h.user.uid) op=open\\n' >> \(Self.log) 2>/dev/null; echo append=$?
            : > \(Self.log) 2>/dev/null; echo truncate=$?
            truncate -s 0 \(Self.log) 2>/dev/null; echo truncate2=$?
            rm -f \(Self.log) 2>/dev/null; echo remove=$?
            mv \(Self.log) "$HOME/moved" 2>/dev/null; echo move=$?
            ln -s "$HOME/mine" \(Self.log).1 2>/dev/null; echo link=$?
            """, askpass: false)
        for step in ["read", "append", "truncate", "truncate2", "remove", "move", "link"] {
            XCTAssertNotEqual(attack.values[step], "0", "the user could \(step) the record: \(attack.summary)")
        }
        XCTAssertEqual(lstat(Self.log, &file), 0, "still there")
        let after = lines(uid: h.user.uid)
        XCTAssertEqual(after.count, before, "nothing added or taken away:\n\(after.joined(separator: "\n"))")
        XCTAssertFalse(after.contains { $0.hasPrefix("forged") })
    }
}
