// Root's audit record (Gatekeeper/GateAuditFile.swift) in a private gate folder: one line per
// decision, a fixed form, values quoted as syslog's lines quote them, and a size bound kept by
// rotating to gatekeeper.log.1.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateGatekeeper
@testable import KeygateCore
@testable import KeygateGatekeeper

final class GateAuditFileTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "keygate-audit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        setenv("KEYGATE_TEST_GATE_DIR", folder, 1)
    }

    override func tearDown() {
        unsetenv("KEYGATE_TEST_GATE_DIR")
        try? FileManager.default.removeItem(atPath: folder)
    }

    func test_aLine_hasTheTimeThenTheFieldsGiven_quoted_andNoAbsentOne() {
        XCTAssertEqual(GateAuditFile.timestamp(0), "1970-01-01T00:00:00Z")
        XCTAssertEqual(GateAuditFile.timestamp(1_796_533_803), "2026-12-06T05:10:03Z")
        XCTAssertEqual(GateAuditFile.line([("uid", "1001"), ("op", "open"), ("basis", nil), ("service", "my vpn\n")], time: 0),
                       "1970-01-01T00:00:00Z uid=1001 op=open service=\"my vpn\\x0a\"\n")
    }

    func test_appendedLines_areKept_inAFolderAndFileOnlyTheOwnerReaches() throws {
        GateAuditFile.append([("uid", "7"), ("op", "validate"), ("result", "granted")], environment: .process())
        GateAuditFile.append([("uid", "7"), ("op", "lock"), ("result", "granted")], environment: .process())
        let text = try String(contentsOfFile: GateAuditFile.path(.process()), encoding: .utf8)
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 2, text)
        XCTAssertTrue(lines[0].hasSuffix(" uid=7 op=validate result=granted"), text)
        XCTAssertTrue(lines[1].hasSuffix(" uid=7 op=lock result=granted"), text)
        var info = stat()
        XCTAssertEqual(stat(GateAuditFile.folder(.process()), &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(stat(GateAuditFile.path(.process()), &info), 0)
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
}
