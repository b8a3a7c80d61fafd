// The CLI's surface that needs no user or keyring: version, help, usage errors.
import Foundation
import KeygateTestSupport
import XCTest

final class KeygateUsageTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
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

    func test_mistypedVerb_suggestsTheClosest_likeAMistypedOption() throws {
        for (typed, meant) in [("gte", "get"), ("lsit", "list"), ("find-generic-pasword", "find-generic-password")] {
            let r = try keygate(typed, "-s", "x", "-a", "y")
            XCTAssertEqual(r.status, 2, r.err)
            XCTAssertTrue(r.err.hasPrefix("keygate: unknown verb '\(typed)': did you mean '\(meant)'?"), r.err)
            XCTAssertTrue(r.err.contains("USAGE") || r.err.contains("keygate ["), "a usage line follows: \(r.err)")
        }
        XCTAssertFalse(try keygate("frobnicate").err.contains("did you mean"), "no suggestion when nothing is close")
    }

    func test_helpOfAnUnknownVerb_exits2_withTheSuggestion_notTheOverview() throws {
        let r = try keygate("help", "gte")
        XCTAssertEqual(r.status, 2, r.out + r.err)
        XCTAssertTrue(r.err.contains("did you mean 'get'?"), r.err)
        XCTAssertFalse(r.out.contains("SUBCOMMANDS"), "the overview is not printed as if all were well: \(r.out)")
        let known = try keygate("help", "get")
        XCTAssertEqual(known.status, 0)
        XCTAssertTrue(known.out.contains("keygate get"), known.out)
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
