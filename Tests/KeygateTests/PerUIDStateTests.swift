// Everything root keeps for one uid (docs/GATEKEEPER.md, "Root's state") is named in one place,
// GatekeeperPaths, and `keygate forget-user` removes all of it (ForgetUser walks
// GatekeeperPaths.perUIDPaths). Two rules, read from the sources: every GatekeeperPaths function
// that makes a path from a uid is in perUIDPaths, and no other source file makes such a path
// itself. Then ForgetUser, run as root on a private gate folder, leaves no file named by the
// uid anywhere under it, keeps the audit record aside, and leaves another uid's state alone.
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateCore
@testable import KeygateGateWire
@testable import KeygateGatekeeper

final class PerUIDStateTests: XCTestCase {
    private var pathsSource: String {
        get throws { try String(contentsOfFile: PackagePaths.root + "/Sources/KeygateGateWire/GatekeeperPaths.swift", encoding: .utf8) }
    }

    /// The GatekeeperPaths functions that take a uid: each is a per-uid path.
    private func perUIDFunctions(in source: String) throws -> [String] {
        let regex = try NSRegularExpression(pattern: #"static func (\w+)\(uid: UInt32"#)
        let text = source as NSString
        return regex.matches(in: source, range: NSRange(location: 0, length: text.length)).map { text.substring(with: $0.range(at: 1)) }
    }

    /// The body of perUIDPaths.
    private func listBody(in source: String) throws -> String {
        let start = try XCTUnwrap(source.range(of: "static func perUIDPaths("))
        let rest = source[start.upperBound...]
        let end = try XCTUnwrap(rest.range(of: "\n    }\n"))
        return String(rest[..<end.lowerBound])
    }

    func test_everyPerUIDPath_isInTheListForgetUserRemoves() throws {
        let source = try pathsSource
        let functions = try perUIDFunctions(in: source).filter { $0 != "perUIDPaths" }
        XCTAssertTrue(functions.contains("fingerUnlockPath") && functions.contains("sessionCounterPath")
                      && functions.contains("auditUserPath"), "the reading found the per-uid paths: \(functions)")
        let body = try listBody(in: source)
        for name in functions {
            XCTAssertTrue(body.contains(name + "(uid:"), "GatekeeperPaths.\(name) is a per-uid path that perUIDPaths (forget-user) leaves out")
        }
        // The rule fails when a new one is left out.
        let added = source.replacingOccurrences(of: "    // MARK: Per uid",
                                                with: "    package static func newState(uid: UInt32) -> String { \"\" }\n    // MARK: Per uid")
        let addedBody = try listBody(in: added)
        let missing = try perUIDFunctions(in: added).filter { $0 != "perUIDPaths" && !addedBody.contains($0 + "(uid:") }
        XCTAssertEqual(missing, ["newState"])
    }

    /// A path built from a uid outside GatekeeperPaths ("/\(uid)", "\(uid).sessions") would be state
    /// forget-user does not know.
    func test_noOtherSourceFile_buildsAPathFromAUid() throws {
        let pattern = try NSRegularExpression(pattern: #"/\\\((?:\w+\.)?uid\)|\\\((?:\w+\.)?uid\)\.[a-z]"#)
        func builds(_ text: String) -> Bool {
            pattern.firstMatch(in: text, range: NSRange(location: 0, length: (text as NSString).length)) != nil
        }
        XCTAssertTrue(builds(#"root(environment) + "/\(uid)""#), "the rule sees the form FingerUnlockKey once had")
        XCTAssertTrue(builds(#""\(directory)/\(uid).sessions""#), "and SessionCounter's")
        XCTAssertFalse(builds(#""keygate:\(uid):""#), "a keyring name is not a path")
        for (file, text) in try PackagePaths.swiftSources() where file != "KeygateGateWire/GatekeeperPaths.swift" {
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where builds(String(line)) && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                XCTFail("\(file):\(number + 1) builds a per-uid path outside GatekeeperPaths: \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
    }

    /// ForgetUser on a private gate folder (KEYGATE_TEST_GATE_DIR): every per-uid path made, then
    /// nothing named by the uid is left, the audit files are kept aside, another uid is untouched.
    func test_forgetUser_leavesNoFileOfTheUid_andKeepsItsAuditAside() throws {
        try Requirement.require(Requirement.isRoot, "root (ForgetUser runs as root only)")
        let folder = NSTemporaryDirectory() + "keygate-forget-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let environment = KeygateEnvironment(["KEYGATE_TEST_GATE_DIR": folder])
        // Uids no account has (the check for a live account passes without --removing).
        let uid: UInt32 = 3_999_000_000 + UInt32.random(in: 0..<900_000), other = uid + 1
        for id in [uid, other] {
            for (path, _) in GatekeeperPaths.perUIDPaths(uid: id, environment) {
                let parent = (path as NSString).deletingLastPathComponent
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
                if path == GatekeeperPaths.stateDirectory(uid: id, environment) {
                    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
                    try Data("s".utf8).write(to: URL(fileURLWithPath: path + "/secret"))
                } else {
                    try Data("x".utf8).write(to: URL(fileURLWithPath: path))
                }
            }
        }
        defer { for id in [uid, other] { unlink(GatekeeperPaths.sessionCounterPath(uid: id)) } }
        let outcome = try ForgetUser.run(uid: uid, accountBeingRemoved: false, environment: environment)
        XCTAssertEqual(outcome.removed.count, GatekeeperPaths.perUIDPaths(uid: uid, environment).count, "\(outcome.removed)")
        for (path, _) in GatekeeperPaths.perUIDPaths(uid: uid, environment) {
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "forget-user left \(path)")
        }
        for (path, _) in GatekeeperPaths.perUIDPaths(uid: other, environment) {
            XCTAssertTrue(FileManager.default.fileExists(atPath: path), "another uid's \(path) is untouched")
        }
        // Nothing named by the uid anywhere under root's folders, but the audit record kept aside.
        let forgotten = GatekeeperPaths.auditForgottenFolder(environment)
        var left: [String] = []
        for case let file as String in FileManager.default.enumerator(atPath: folder) ?? NSEnumerator()
        where (file as NSString).lastPathComponent.hasPrefix("\(uid)") {
            left.append(file)
        }
        XCTAssertEqual(left, [], "files of uid \(uid) left")
        let kept = try FileManager.default.contentsOfDirectory(atPath: forgotten)
        XCTAssertEqual(kept.filter { $0.hasSuffix("-\(uid).log") || $0.hasSuffix("-\(uid).log.1") }.count, 2, "\(kept)")
    }
}
