// `make check`'s debug pass leaves out, when the release pass will run (root), the tests that
// the release pass runs against the installed build: DEBUG_PASS_SKIP is made in the Makefile
// from RELEASE_PASS_FILTER and RELEASE_PASS_SKIP. This test lists the test bundle's own tests
// and applies the three regexes as `swift test` does (Foundation's regular expressions on
// "Module.Class/test"), so a test the debug pass leaves out is always one the release pass runs,
// and where the release pass does not run (not root) the debug pass leaves out nothing of it.
import Foundation
import KeygateTestSupport
import XCTest

final class ReleasePassTests: XCTestCase {
    /// RELEASE_PASS_FILTER, RELEASE_PASS_SKIP and DEBUG_PASS_SKIP as make prints them.
    private func regexes(releasePassRuns: Bool) throws -> (filter: String, skip: String, debugSkip: String) {
        let printed = try Subprocess.run(["make", "-s", "--no-print-directory", "-C", PackagePaths.root, "debug-pass-skip",
                                          "RELEASE_PASS_RUNS=" + (releasePassRuns ? "yes" : "")], timeout: 60)
        XCTAssertEqual(printed.status, 0, printed.err)
        let lines = printed.out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertGreaterThanOrEqual(lines.count, 3, "make debug-pass-skip printed no three regexes: \(printed.out)")
        let line = { (n: Int) in n < lines.count ? lines[n] : "" }
        for n in 0..<3 { XCTAssertFalse(line(n).isEmpty, "make debug-pass-skip's line \(n + 1) is empty: \(printed.out)") }
        return (line(0), line(1), line(2))
    }

    /// Every XCTest test of the bundle, as "Module.Class/test" (the xctest runner's --list-tests).
    private func allTests() throws -> [String] {
        let bundle = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let listed = try Subprocess.run([bundle, "--list-tests"], timeout: 120)
        XCTAssertEqual(listed.status, 0, listed.err)
        return listed.out.split(separator: "\n").map(String.init).filter { $0.contains(".") && $0.contains("/") && !$0.hasPrefix("Listing") }
    }

    private func matches(_ test: String, _ pattern: String) -> Bool {
        test.range(of: pattern, options: .regularExpression) != nil
    }

    func test_theDebugPassLeavesOut_onlyWhatTheReleasePassRuns() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/make"), "make")
        let makefile = try String(contentsOfFile: PackagePaths.root + "/Makefile", encoding: .utf8)
        XCTAssertTrue(makefile.contains("--skip '$(DEBUG_PASS_SKIP)'"), "the debug pass no longer skips DEBUG_PASS_SKIP")
        XCTAssertTrue(makefile.contains("--filter '$(RELEASE_PASS_FILTER)' --skip '$(RELEASE_PASS_SKIP)'"),
                      "the release pass no longer runs RELEASE_PASS_FILTER minus RELEASE_PASS_SKIP")
        let wrappers = #"^AppleWrapperSuites\."#
        let (filter, skip, debugSkip) = try regexes(releasePassRuns: true)
        let tests = try allTests()
        XCTAssertGreaterThan(tests.count, 500, "the bundle's test list: \(tests.prefix(5))")

        let released = Set(tests.filter { matches($0, filter) && !matches($0, skip) })
        let leftOut = Set(tests.filter { matches($0, debugSkip) && !matches($0, wrappers) })
        XCTAssertGreaterThan(released.count, 100, "the release pass runs the installed build's tests")
        XCTAssertEqual(leftOut.subtracting(released).sorted(), [], "left out of the debug pass but not run by the release pass")
        XCTAssertEqual(released.subtracting(leftOut).sorted(), [], "run twice, though the release pass runs them")
        // The release pass's own skips (they need test hooks) stay in the debug pass.
        let hooksOnly = tests.filter { matches($0, filter) && matches($0, skip) }
        XCTAssertGreaterThanOrEqual(hooksOnly.count, 6, "RELEASE_PASS_SKIP's tests: \(hooksOnly)")
        for test in hooksOnly { XCTAssertFalse(matches(test, debugSkip), "\(test) runs in no pass") }
        XCTAssertTrue(leftOut.contains { $0.hasPrefix("KeygateCLITests.TerminalCLITests/") })

        // Not root: check-release is skipped, so the debug pass keeps every test but the wrapper suites.
        let (_, _, alone) = try regexes(releasePassRuns: false)
        XCTAssertEqual(alone, wrappers)
    }
}
