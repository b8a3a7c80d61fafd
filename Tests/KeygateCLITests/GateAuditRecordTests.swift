// The gatekeeper's own audit record (docs/GATEKEEPER.md): root appends each decision to
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

    /// Every file of the record: pam_keygate's and each user's, with the one before each.
    static func recordFiles() -> [String] {
        let users = "/var/log/keygate/users"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: users)) ?? []
        return [log + ".1", log] + names.sorted().map { users + "/" + $0 }
    }

    /// The record's lines about `uid`, wherever they are kept.
    private func lines(uid: UInt32) -> [String] {
        Self.recordFiles().flatMap { file in
            ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }.filter { $0.contains(" uid=\(uid) ") }
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

    /// One user floods the record: presence requests with no prompt, through raw frames to the
    /// setuid gatekeeper, for a made-up item with a 4 KiB service and a 4 KiB account (each a refused
    /// decision, so each a line). Another user's earlier failure line survives it; the flooder's lines
    /// are short, ASCII only, and take at most their own two files. A name of U+2028, U+202E, a
    /// no-break space and a fullwidth `＝` is written escaped.
    func test_oneUsersFloodOfLongNames_keepsAnotherUsersFailureLine() throws {
        let victim = try CLIUserHarness()
        try victim.queueAnswers(["wrong-password"])
        let failed = try victim.run("""
            printf %s v | keygate add -s audited -a v --access user-presence >/dev/null 2>&1; echo add=$?
            keygate lock --all >/dev/null 2>&1
            keygate get -s audited -a v >/dev/null 2>&1; echo get=$?
            """, wrapper: Self.noSyslog)
        XCTAssertEqual(failed.values["get"], "0", "a wrong password, then the right one: \(failed.summary)")
        let failure = try XCTUnwrap(lines(uid: victim.user.uid).last { $0.contains("event=auth-failure") },
                                    "the victim's failure line is in the record")

        let flooder = try CLIUserHarness(sharedUser: true)
        let floods = 300
        let started = Date()
        let r = try flooder.run(GateRawClient.install + """

            gate flood \(GateRawClient.Op.presence) \(GateRawClient.noPrompt) long=4096 repeat=\(floods)
            gate hostile \(GateRawClient.Op.presence) \(GateRawClient.noPrompt) "service=$(printf 'x\\342\\200\\250uid=0\\342\\200\\256y\\302\\240z\\357\\274\\235w')" account=a
            """, timeout: 600, wrapper: Self.noSyslog)
        let seconds = Date().timeIntervalSince(started)
        XCTAssertEqual(r.values["flood.status"], GateRawClient.interactionNotAllowed, r.summary)
        XCTAssertEqual(r.values["hostile.status"], GateRawClient.interactionNotAllowed, r.summary)

        XCTAssertTrue(lines(uid: victim.user.uid).contains(failure), "the victim's failure line survived \(floods) long requests")
        let flooded = lines(uid: flooder.user.uid).filter { $0.contains("op=presence") }
        XCTAssertGreaterThanOrEqual(flooded.count, 2, "the flood was recorded")
        let longest = flooded.map(\.utf8.count).max() ?? 0
        XCTAssertLessThan(longest, 1024, "a line with two 4 KiB names is short")
        XCTAssertTrue(flooded.allSatisfy { $0.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } }, "ASCII only")
        let hostile = try XCTUnwrap(flooded.last { $0.contains("account=a ") }, flooded.suffix(2).joined(separator: "\n"))
        XCTAssertTrue(hostile.contains(#"service="x\u{2028}uid=0\u{202e}y\u{00a0}z\u{ff1d}w""#), hostile)
        let own = Self.recordFiles().filter { $0.hasSuffix("/\(flooder.user.uid).log") || $0.hasSuffix("/\(flooder.user.uid).log.1") }
        let bytes = own.reduce(0) { $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0) }
        XCTAssertLessThanOrEqual(bytes, 2 * 256 * 1024, "the flooder's record is bounded: \(own)")
        print("AUDIT FLOOD: \(floods) requests of 2 x 4096-byte names in \(Int(seconds)) s; longest line \(longest) bytes; "
              + "the flooder's files \(bytes) bytes; the victim's failure line kept")
    }
}
