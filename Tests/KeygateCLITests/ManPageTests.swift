// The man pages, from their one source format: each man/*.scd is rendered by
// the real scdoc, then formatted by groff with every warning on, as `man -l` would.
// A page must render without a warning and carry the sections a reader looks for.
import Foundation
import KeygateTestSupport
import XCTest

final class ManPageTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private static let pages = ["keygate.1", "keygate.policy.5", "pam_keygate.8", "keygate-secret-service.8",
                                 "git-credential-keygate.1", "keygate-ssh-askpass.1", "docker-credential-keygate.1"]
    private static let requiredSections = ["NAME", "SYNOPSIS", "DESCRIPTION", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES", "SEE ALSO"]

    /// The page rendered to troff by scdoc.
    private func troff(_ page: String) throws -> String {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/scdoc"), "scdoc (apt-get install scdoc)")
        let source = try Data(contentsOf: URL(fileURLWithPath: PackagePaths.root + "/man/\(page).scd"))
        let r = try Subprocess.run(["/usr/bin/scdoc"], stdin: source)
        XCTAssertEqual(r.status, 0, "scdoc refused man/\(page).scd: \(r.err)")
        return r.out
    }

    func test_everySourceInManFolder_isOneOfThePages() throws {
        let sources = try FileManager.default.contentsOfDirectory(atPath: PackagePaths.root + "/man")
            .filter { $0.hasSuffix(".scd") }.map { String($0.dropLast(4)) }
        XCTAssertEqual(Set(sources), Set(Self.pages))
        let troffLeft = try FileManager.default.contentsOfDirectory(atPath: PackagePaths.root + "/docs")
            .filter { $0.range(of: #"\.[1-8]$"#, options: .regularExpression) != nil }
        XCTAssertEqual(troffLeft, [], "every page comes from man/*.scd; hand-written troff in docs/ would drift")
    }

    func test_eachPage_rendersWithoutGroffWarnings() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/groff"), "groff (apt-get install groff-base)")
        for page in Self.pages {
            let source = try troff(page)
            let r = try Subprocess.run(["/usr/bin/groff", "-ww", "-man", "-Tutf8", "-P-cbou"], stdin: Data(source.utf8))
            XCTAssertEqual(r.status, 0, page)
            XCTAssertEqual(r.err, "", "\(page): groff warnings")
            XCTAssertTrue(r.out.contains("NAME"), "\(page) rendered to nothing")
        }
    }

    func test_eachPage_hasTheSectionsAReaderLooksFor() throws {
        for page in Self.pages {
            let source = try troff(page)
            let headings = Set(source.split(separator: "\n").filter { $0.hasPrefix(".SH ") }
                .map { $0.dropFirst(4).trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) })
            for section in Self.requiredSections {
                XCTAssertTrue(headings.contains(section), "\(page) lacks \(section); it has \(headings.sorted())")
            }
        }
    }

    func test_passwdRecovery_thePageTheHelpAndTheProgramAgree() throws {
        // After a root reset, `passwd --recovery` asks nothing and says that items with user presence keep
        // working (TerminalCLITests.test_passwdRecovery_asksForTheRecoveryKeyThenTheNewPassword types it); the page and
        // --help say the same, and neither says they are invalidated.
        let page = try troff("keygate.1").replacingOccurrences(of: "\n", with: " ")
        let help = try Subprocess.run([PackagePaths.keygateBinary, "passwd", "--help"])
        XCTAssertEqual(help.status, 0, help.err)
        let helpText = help.out.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        for (name, text) in [("keygate(1)", page), ("passwd --help", helpText)] {
            XCTAssertTrue(text.contains("Items with user presence keep working either way"), "\(name): \(text)")
            XCTAssertFalse(text.contains("user-presence items are then invalidated"), name)
        }
        XCTAssertTrue(page.contains("otherwise it asks nothing before the recovery key"), page)
    }

    func test_keygatePage_statesTheSecretSizeLimit_theProgramEnforces() throws {
        // The page states the limit the program enforces. HostileInputCLITests checks that add refuses more (exit 206).
        let source = try String(contentsOfFile: PackagePaths.root + "/man/keygate.1.scd", encoding: .utf8)
        XCTAssertTrue(source.replacingOccurrences(of: "\n\t", with: " ").contains("A secret is at most 64 KiB (65536 bytes)"))
        let help = try Subprocess.run([PackagePaths.keygateBinary, "add", "--help"])
        XCTAssertTrue(help.out.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
                        .contains("at most 64 KiB (65536 bytes)"), help.out)
    }

    func test_keygatePage_listsEveryVerbTheCLIOffers() throws {
        let help = try Subprocess.run([PackagePaths.keygateBinary, "--help"])
        XCTAssertEqual(help.status, 0, help.err)
        let source = try String(contentsOfFile: PackagePaths.root + "/man/keygate.1.scd", encoding: .utf8)
        // The verb column of the SUBCOMMANDS section: lines indented by exactly two spaces.
        let lines = help.out.split(separator: "\n", omittingEmptySubsequences: false)
        let section = lines.drop { !$0.hasPrefix("SUBCOMMANDS") }.dropFirst()
        let verbs = section.compactMap { line -> String? in
            guard line.hasPrefix("  "), line.dropFirst(2).first?.isLowercase == true,
                  let first = line.split(separator: " ").first else { return nil }
            return String(first.trimmingCharacters(in: CharacterSet(charactersIn: ",")))
        }
        XCTAssertGreaterThan(verbs.count, 8, "could not read the verbs from --help: \(help.out)")
        for verb in verbs {
            XCTAssertTrue(source.contains("\n*\(verb)*") || source.contains("\n*\(verb) "), "man/keygate.1.scd does not document `\(verb)`")
        }
    }
}
