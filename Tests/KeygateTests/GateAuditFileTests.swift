// Root's audit record (Gatekeeper/GateAuditFile.swift) in a private gate folder: one line per
// decision, a fixed form, values quoted, cut and escaped to ASCII, and a size bound per user kept
// by rotating each uid's own file (users/UID.log.1) and pam_keygate's (gatekeeper.log.1).
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateCore
@testable import KeygateGatekeeper

final class GateAuditFileTests: XCTestCase {
    override func setUpWithError() throws {
        try makeGateFolder(self)
    }

    func test_aLine_hasTheTimeThenTheFieldsGiven_quoted_andNoAbsentOne() {
        XCTAssertEqual(GateAuditFile.timestamp(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(GateAuditFile.timestamp(1_796_533_803), "2026-12-06T05:10:03Z")
        XCTAssertEqual(GateAuditFile.line([("uid", "1001"), ("op", "open"), ("basis", nil), ("service", "my vpn\n")], time: 0),
                       "1970-01-01T00:00:00Z uid=1001 op=open service=\"my vpn\\x0a\"\n")
    }

    func test_appendedLines_areKept_inAFolderAndFileOnlyTheOwnerReaches() throws {
        GateAuditFile.append(uid: 7, [("uid", "7"), ("op", "validate"), ("result", "granted")], environment: .process())
        GateAuditFile.append(uid: 7, [("uid", "7"), ("op", "lock"), ("result", "granted")], environment: .process())
        let text = try String(contentsOfFile: GateAuditFile.userPath(uid: 7, .process()), encoding: .utf8)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, text)
        XCTAssertTrue(lines[0].hasSuffix(" uid=7 op=validate result=granted"), text)
        XCTAssertTrue(lines[1].hasSuffix(" uid=7 op=lock result=granted"), text)
        var info = stat()
        XCTAssertEqual(stat(GateAuditFile.folder(.process()), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(GateAuditFile.folder(.process()) + "/users", &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(GateAuditFile.userPath(uid: 7, .process()), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
    }

    func test_pastTheBound_theFileIsRotatedOnce_andTheRecordStaysUnderTwiceIt() throws {
        let filler = String(repeating: "x", count: 200)
        let count = 2 * GateAuditFile.maxBytes / 220 + 100
        for i in 0..<count { GateAuditFile.append([("n", "\(i)"), ("pad", filler)], environment: .process()) }
        var current = stat(), previous = stat()
        XCTAssertEqual(stat(GateAuditFile.path(.process()), &current), 0)
        XCTAssertEqual(stat(GateAuditFile.previousPath(.process()), &previous), 0, "rotated")
        XCTAssertLessThanOrEqual(Int(current.st_size), GateAuditFile.maxBytes)
        XCTAssertLessThanOrEqual(Int(previous.st_size), GateAuditFile.maxBytes)
        let last = try String(contentsOfFile: GateAuditFile.path(.process()), encoding: .utf8).split(separator: "\n").last ?? ""
        XCTAssertTrue(last.contains(" n=\(count - 1) "), "the newest line is in the current file: \(last.prefix(60))")
        let files = try FileManager.default.contentsOfDirectory(atPath: GateAuditFile.folder(.process())).filter { $0.hasPrefix("gatekeeper.log") }
        XCTAssertEqual(files.sorted(), ["gatekeeper.log", "gatekeeper.log.1"], "one previous file, no more")
    }

    func test_aValue_isEscapedToASCII_soNoDisplayOrSplitterIsFooled() {
        let hostile = "a\u{2028}b\u{202E}c\u{00A0}d\u{FF1D}e\u{1F600}"
        let written = GateAuditFile.field(hostile)
        XCTAssertEqual(written, #""a\u{2028}b\u{202e}c\u{00a0}d\u{ff1d}e\u{1f600}""#)
        XCTAssertTrue(written.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, written)
        XCTAssertEqual(GateAuditFile.field("plain-name"), "plain-name")
        XCTAssertEqual(GateAuditFile.field("a=b"), "\"a=b\"", "an = is quoted, so it never starts a field")
        XCTAssertEqual(GateAuditFile.field(""), "\"\"")
        let line = GateAuditFile.line([("uid", "1"), ("service", "x\u{2028}uid=0 op=open")], time: 0)
        XCTAssertEqual(line.split(separator: "\n", omittingEmptySubsequences: false).count, 2, "one line: \(line)")
        XCTAssertFalse(line.contains(" uid=0 "), "no field forged: \(line)")
    }

    func test_aLongValue_isCut_withItsLengthAndAHashOfTheWhole() {
        let long = String(repeating: "s", count: 4096)
        let other = String(repeating: "s", count: 4095) + "t"
        let written = GateAuditFile.field(long)
        XCTAssertLessThanOrEqual(written.utf8.count, GateAuditFile.maxValueBytes + 60, written)
        XCTAssertTrue(written.hasPrefix("\"" + String(repeating: "s", count: GateAuditFile.maxValueBytes)), written)
        XCTAssertNotNil(written.range(of: #"\.\.\.\[cut: 4096 bytes, blake2b [0-9a-f]{16}\]"$"#, options: .regularExpression), written)
        XCTAssertNotEqual(written, GateAuditFile.field(other), "two names with one beginning differ by their hash")
        // Escapes count towards the cut: a name of 4 KiB of U+202E is as short.
        let escaped = GateAuditFile.field(String(repeating: "\u{202E}", count: 4096))
        XCTAssertLessThanOrEqual(escaped.utf8.count, GateAuditFile.maxValueBytes + 60, escaped)
        XCTAssertTrue(escaped.contains("[cut: 12288 bytes, blake2b "), escaped)
        let full = GateAuditFile.line([("uid", "1"), ("user", long), ("service", long), ("account", long), ("scope", long)], time: 0)
        XCTAssertLessThan(full.utf8.count, 1024, "a line with four 4-KiB names is short")
    }

    /// Each uid's decisions go to its own file: one user's flood rotates only that user's lines,
    /// and another user's earlier failure line survives it.
    func test_oneUsersFlood_neverPushesOutAnotherUsersLine() throws {
        let env = KeygateEnvironment.process()
        GateAuditFile.append(uid: 1001, [("uid", "1001"), ("event", "auth-failure"), ("detail", "incorrect password")], environment: env)
        let long = String(repeating: "f", count: 4096)
        let floods = 3 * GateAuditFile.userMaxBytes / 300
        for i in 0..<floods {
            GateAuditFile.append(uid: 1002, [("uid", "1002"), ("op", "presence"), ("n", "\(i)"), ("service", long), ("account", long)],
                                 environment: env)
        }
        let victim = try String(contentsOfFile: GateAuditFile.userPath(uid: 1001, env), encoding: .utf8)
        XCTAssertTrue(victim.contains("event=auth-failure"), victim)
        var current = stat(), previous = stat()
        XCTAssertEqual(stat(GateAuditFile.userPath(uid: 1002, env), &current), 0)
        XCTAssertEqual(stat(GateAuditFile.userPath(uid: 1002, env) + ".1", &previous), 0, "the flood rotated its own file")
        XCTAssertLessThanOrEqual(Int(current.st_size), GateAuditFile.userMaxBytes)
        XCTAssertLessThanOrEqual(Int(previous.st_size), GateAuditFile.userMaxBytes)
        XCTAssertFalse(FileManager.default.fileExists(atPath: GateAuditFile.path(env)), "no decision goes to pam_keygate's file")
    }
}
