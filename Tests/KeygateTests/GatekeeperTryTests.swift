// Root's code handles its errors: a `try?` in KeygateGatekeeper hides a failure, so each one left
// carries its reason on the line before (`// try?: why ignoring it is safe`), and their number
// only falls: `budget` is the count now, and the test fails when a new one appears or when the
// count fell and the budget was not lowered with it (a ratchet, read from the sources).
import Foundation
import KeygateTestSupport
import XCTest

final class GatekeeperTryTests: XCTestCase {
    /// The `try?` KeygateGatekeeper holds (13 before they were handled; each left says why).
    static let budget = 2

    /// The `try?` in a file's code (comments left out), each with its line and the line before it.
    static func tries(in text: String) -> [(line: Int, before: String)] {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var found: [(Int, String)] = []
        for (index, line) in lines.enumerated() {
            let code = line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? line
            let count = code.components(separatedBy: "try?").count - 1
            for _ in 0..<count { found.append((index + 1, index > 0 ? lines[index - 1] : "")) }
        }
        return found
    }

    func test_everyTryQuestionMark_saysWhyIgnoringItIsSafe_andTheCountOnlyFalls() throws {
        let sources = try PackagePaths.swiftSources(under: "Sources/KeygateGatekeeper")
        XCTAssertFalse(sources.isEmpty, "the gatekeeper's sources were read")
        var total = 0
        for (file, text) in sources.sorted(by: { $0.key < $1.key }) {
            for found in Self.tries(in: text) {
                total += 1
                XCTAssertTrue(found.before.trimmingCharacters(in: .whitespaces).hasPrefix("// try?: "),
                              "KeygateGatekeeper/\(file):\(found.line): a try? with no `// try?: reason` on the line before: handle the error, or say why ignoring it is safe")
            }
        }
        XCTAssertLessThanOrEqual(total, Self.budget, "a new try? in root's code: handle the error instead")
        XCTAssertEqual(total, Self.budget, "the count fell to \(total): lower GatekeeperTryTests.budget to it, so it cannot grow back")
        // The reading sees a try? and its reason, and leaves one in a comment alone.
        XCTAssertEqual(Self.tries(in: "// try?: safe\n_ = try? f() // try? again\n").map(\.before), ["// try?: safe"])
    }
}
