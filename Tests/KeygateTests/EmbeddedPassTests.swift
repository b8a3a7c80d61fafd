// `make check`'s embedded-store pass is chosen by the test classes' own declarations
// (OutsideTheEmbeddedPass, Tests/KeygateTestSupport/EmbeddedPass.swift), not by a class list
// in the Makefile: EMBEDDED_PASS_SKIP is made from them. This test reads the declarations
// itself and fails when the Makefile's list and theirs differ (a declaration the Makefile's
// sed misses, or a name kept by hand), so a class left out of the pass is one that says why.
import Foundation
import KeygateTestSupport
import XCTest

final class EmbeddedPassTests: XCTestCase {
    private static let targets = ["KeygateIntegrationTests", "KeygateSecurityTests", "KeygateCLITests"]

    /// Type names whose declaration conforms to OutsideTheEmbeddedPass, read from the sources.
    private func declaredOutside() throws -> Set<String> {
        var names: Set<String> = []
        let pattern = try NSRegularExpression(pattern: #"^\s*(?:final\s+)?(?:class|struct)\s+(\w+)\s*:[^{]*\bOutsideTheEmbeddedPass\b"#,
                                              options: .anchorsMatchLines)
        for target in Self.targets {
            let folder = PackagePaths.root + "/Tests/" + target
            for file in try FileManager.default.contentsOfDirectory(atPath: folder) where file.hasSuffix(".swift") {
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range(at: 1), in: text) { names.insert(String(text[range])) }
                }
            }
        }
        return names
    }

    func test_theMakefilesSkipList_isMadeFromTheClassesDeclarations() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/make"), "make")
        let makefile = try String(contentsOfFile: PackagePaths.root + "/Makefile", encoding: .utf8)
        XCTAssertTrue(makefile.contains("EMBEDDED_PASS_SKIP := $(shell sed"), "EMBEDDED_PASS_SKIP is no longer made from the declarations")
        let printed = try Subprocess.run(["make", "-s", "--no-print-directory", "-C", PackagePaths.root, "embedded-pass-skip"], timeout: 60)
        XCTAssertEqual(printed.status, 0, printed.err)
        let skipped = Set(printed.out.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").map(String.init))

        let declared = try declaredOutside()
        XCTAssertEqual(skipped, declared, "make embedded-pass-skip and the OutsideTheEmbeddedPass declarations differ")
        // The store-contract suite runs the embedded store itself (StoreKind.embedded); the
        // flows through the library and the CLI stay in the pass.
        XCTAssertTrue(declared.contains("ItemStoreMatrixTests"))
        for flow in ["KeychainAPIIntegrationTests", "KeygateCLITests", "KeygateSecurityTests", "ThisDeviceOnlyTests"] {
            XCTAssertFalse(declared.contains(flow), "\(flow) is a store flow: it belongs in the embedded pass")
        }
    }
}
