// ItemStoreMatrixTests must run every check of ItemStoreContract, each on every store kind:
// this suite reads both files and fails when a check has no test there, or when a test runs
// on fewer kinds than StoreKind.allCases without being one of the checks the provider
// matrix never ran (docs/DECISIONS.md, "One list, one matrix, one declaration").
import Foundation
import KeygateTestSupport
import Testing

@Suite
struct ItemStoreMatrixCoverageTests: OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow

    static let folder = PackagePaths.root + "/Tests/KeygateIntegrationTests/"
    /// The contract's helpers, which are not checks.
    static let helpers: Set<String> = ["genericAttributes", "withDates", "assertThrows", "expectThrows", "medianWarmGet"]
    /// Checks that run on the embedded store and the suite's gnome-keyring only: no provider class ran them.
    static let notOnTheProviderMatrix: Set<String> = ["search_roundTrips", "synchronizableTwins_areTwoItems_eachFoundByItsOwnKey",
                                                      "delete_returnsCount_andRemovesOnlyMatches"]

    /// The names of the functions declared at one indent (4 spaces) in `file`.
    static func functions(in file: String) throws -> [String] {
        let text = try String(contentsOfFile: folder + file, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("    func ") else { return nil }
            return String(line.dropFirst("    func ".count).prefix { $0 != "(" && $0 != "<" })
        }
    }

    /// Each `@Test(arguments: ...)` of ItemStoreMatrixTests.swift: the function name → its arguments.
    static func matrixTests() throws -> [String: String] {
        let lines = try String(contentsOfFile: folder + "ItemStoreMatrixTests.swift", encoding: .utf8).split(separator: "\n")
        var tests: [String: String] = [:]
        for (index, line) in lines.enumerated() where line.trimmingCharacters(in: .whitespaces).hasPrefix("@Test(arguments: ") {
            let arguments = line.trimmingCharacters(in: .whitespaces).dropFirst("@Test(arguments: ".count).dropLast()
            guard index + 1 < lines.count, lines[index + 1].hasPrefix("    func ") else { continue }
            let name = lines[index + 1].dropFirst("    func ".count).prefix { $0 != "(" }
            tests[String(name)] = String(arguments)
        }
        return tests
    }

    @Test func everyStoreKind_isInTheMatrix() {
        #expect(Set(StoreKind.allCases.map(\.rawValue))
                == ["embedded", "secret-service", "gnome-keyring", "keepassxc", "keepassxc-defaults", "kwallet"])
        #expect(StoreKind.providers == [.gnomeKeyringProvider, .keePassXC, .kWallet])
    }

    @Test func everyContractCheck_runsOnEveryStoreKind() throws {
        let checks = try Self.functions(in: "ItemStoreContract.swift").filter { !Self.helpers.contains($0) }
        let tests = try Self.matrixTests()
        #expect(checks.count >= 16, "found \(checks)")
        for check in checks {
            let arguments = try #require(tests[check], "ItemStoreContract.\(check) has no @Test(arguments:) in ItemStoreMatrixTests")
            if Self.notOnTheProviderMatrix.contains(check) {
                #expect(arguments == "[StoreKind.embedded, .secretService]", "\(check): \(arguments)")
            } else {
                #expect(arguments == "StoreKind.allCases", "\(check) runs on \(arguments), not on every store kind")
            }
        }
    }

    @Test func everyMatrixTest_callsTheContractCheckOfItsName() throws {
        let text = try String(contentsOfFile: Self.folder + "ItemStoreMatrixTests.swift", encoding: .utf8)
        for name in try Self.matrixTests().keys {
            #expect(text.contains("$0.\(name)(") || text.contains("contract.\(name)("), "\(name) does not call ItemStoreContract.\(name)")
        }
    }
}
