// The CLI's surface that needs no user or keyring: version, help, usage errors.
import Foundation
import KeygateTestSupport
import XCTest

final class KeygateUsageTests: XCTestCase {
    private func keygate(_ args: String...) throws -> ProcessResult {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary),
                                "the built keygate binary (run swift build)")
        return try Subprocess.run([PackagePaths.keygateBinary] + args)
    }

    func test_version_printsVersion() throws {
        let r = try keygate("--version")
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.hasPrefix("keygate "), r.out)
    }

    func test_help_listsEveryVerb() throws {
        let r = try keygate("help")
        XCTAssertEqual(r.status, 0)
        for verb in ["init", "add", "get", "delete", "list", "exists", "unlock", "lock", "status"] {
            XCTAssertTrue(r.out.contains("  \(verb)"), "help lists \(verb): \(r.out)")
        }
    }

    func test_unknownVerb_exits2_withUsage() throws {
        let r = try keygate("frobnicate")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.err.contains("unknown verb"), r.err)
    }

    func test_missingAccount_exits2() throws {
        let r = try keygate("exists", "-s", "x")
        XCTAssertEqual(r.status, 2, r.err)
        XCTAssertTrue(r.err.contains("-a ACCOUNT"), r.err)
    }

    func test_badAccessibility_exits206() throws {
        let r = try keygate("add", "-s", "x", "-a", "y", "--accessible", "sometimes")
        XCTAssertEqual(r.status, 206, r.err)
        XCTAssertTrue(r.err.contains("when-unlocked"), r.err)
    }
}
