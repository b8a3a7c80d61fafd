// ReuseScope: the id of each kind (sudo's timestamp_type), and the tty kind's fallback to
// ppid when there is no controlling terminal. Terminal cases run this test binary again
// as a child: under `setsid` (no terminal at all) and under `script` (a fresh pty as the
// controlling terminal). The child prints what it saw and exits in the class setUp.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class ReuseScopeTests: XCTestCase {
    override class func setUp() {
        super.setUp()
        ReuseScopeProbe.runIfRequested()
    }

    // MARK: - in this process

    func test_session_isTheSessionIdOfThisProcess() {
        let scope = ReuseScope.current(.session)
        XCTAssertEqual(scope.kind, .session)
        XCTAssertEqual(scope.id, "session.\(getsid(0))")
        // 0 is a real answer: the session leader lives outside this pid namespace (a
        // container's processes all share it); only -1 would mean getsid failed.
        XCTAssertGreaterThanOrEqual(getsid(0), 0)
    }

    func test_ppid_isTheParentProcessId() {
        let scope = ReuseScope.current(.ppid)
        XCTAssertEqual(scope.kind, .ppid)
        XCTAssertEqual(scope.id, "ppid.\(getppid())")
    }

    func test_global_isOneIdForEveryProcess() {
        XCTAssertEqual(ReuseScope.current(.global), ReuseScope(kind: .global, id: "global"))
    }

    func test_tty_isEitherTheTerminalOrTheSessionFallback_neverSomethingElse() {
        let scope = ReuseScope.current(.tty)
        if scope.kind == .tty {
            XCTAssertTrue(scope.id.hasPrefix("tty."), scope.id)
            XCTAssertNotEqual(scope.id, "tty.0")
        } else {
            XCTAssertEqual(scope, ReuseScope.current(.session))
        }
    }

    // MARK: - /proc/PID/stat parsing

    func test_terminalDevice_readsField7_evenWhenTheCommandNameHasSpacesAndParentheses() {
        let line = "4242 (evil) 1 2 3 (x) S 1 4242 4242 34817 4242 4194304 0 0 0\n"
        XCTAssertEqual(ReuseScope.terminalDevice(fromStat: line), 34817)
    }

    func test_terminalDevice_isNil_forNoTerminal_orAGarbledLine() {
        XCTAssertNil(ReuseScope.terminalDevice(fromStat: "4242 (sh) S 1 4242 4242 0 -1 4194304\n"))
        XCTAssertNil(ReuseScope.terminalDevice(fromStat: "4242 (sh) S 1\n"))
        XCTAssertNil(ReuseScope.terminalDevice(fromStat: "no parenthesis here"))
    }

    // MARK: - in children

    /// docs/DECISIONS.md, "A caller without a terminal gets its session": never its parent, which
    /// may be an adopter of orphans (PID 1, a subreaper).
    func test_tty_fallsBackToTheSession_whenTheProcessHasNoTerminal() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/setsid"), "setsid (util-linux)")
        let child = try ReuseScopeProbe.run(wrapper: { ["setsid", "--wait"] + $0 })

        XCTAssertEqual(child["tty_nr"], "0", "setsid must leave the child without a terminal: \(child)")
        XCTAssertEqual(child["kind"], "session")
        XCTAssertEqual(child["id"], "session.\(child["getsid"] ?? "?")")
        XCTAssertEqual(child["session"], "session.\(child["getsid"] ?? "?")")
    }

    func test_tty_isTheControllingTerminalsDevice_whenThereIsOne() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "script (util-linux)")
        let child = try ReuseScopeProbe.run(wrapper: { argv in
            ["script", "--quiet", "--return", "--command", argv.map { "'\($0)'" }.joined(separator: " "), "/dev/null"]
        })

        XCTAssertEqual(child["kind"], "tty", "\(child)")
        // The pty script made is the child's stdin: its device number is the terminal's.
        let device = try XCTUnwrap(child["stdin_rdev"])
        XCTAssertNotEqual(device, "0")
        XCTAssertEqual(child["id"], "tty.\(device).\(child["getsid"] ?? "?")", "the terminal and its session, as sudo records")
    }
}

/// The child side: with KEYGATE_REUSE_PROBE=<file>, write "KEYGATE-REUSE key=value" lines to that file and
/// exit. A file, not stdout: `script` may drop a pty's last output when its own stdin is at end of file.
enum ReuseScopeProbe {
    private static let variable = "KEYGATE_REUSE_PROBE"
    private static let prefix = "KEYGATE-REUSE"

    static func run(wrapper: ([String]) -> [String]) throws -> [String: String] {
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let report = NSTemporaryDirectory() + "keygate-reuse-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: report) }
        var env = ProcessInfo.processInfo.environment
        env[variable] = report
        let result = try Subprocess.run(wrapper([exe, "KeygateTests.ReuseScopeTests"]), environment: env, timeout: 60)
        let written = (try? String(contentsOfFile: report, encoding: .utf8)) ?? ""
        var fields: [String: String] = [:]
        for line in written.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, parts[0] == prefix, let eq = parts[1].firstIndex(of: "=") else { continue }
            fields[String(parts[1][..<eq])] = String(parts[1][parts[1].index(after: eq)...])
        }
        if fields["kind"] == nil {
            XCTFail("the probe child printed nothing useful (status \(result.status)): \(result.out) \(result.err)")
        }
        return fields
    }

    static func runIfRequested() {
        guard let report = ProcessInfo.processInfo.environment[variable], !report.isEmpty else { return }
        let tty = ReuseScope.current(.tty)
        var info = stat()
        let rdev = fstat(0, &info) == 0 && (info.st_mode & S_IFMT) == S_IFCHR ? UInt64(info.st_rdev) : 0
        let lines = [
            "kind=\(tty.kind.rawValue)",
            "id=\(tty.id)",
            "tty_nr=\(ReuseScope.controllingTerminal() ?? 0)",
            "stdin_rdev=\(rdev)",
            "getppid=\(getppid())",
            "getsid=\(getsid(0))",
            "session=\(ReuseScope.current(.session).id)",
        ]
        let text = lines.map { "\(prefix) \($0)\n" }.joined()
        exit(FileManager.default.createFile(atPath: report, contents: Data(text.utf8)) ? 0 : 1)
    }
}
