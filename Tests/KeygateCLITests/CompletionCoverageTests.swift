// The three shell completions against the real binary: every verb `keygate --help`
// lists is offered by bash, zsh and fish, and none they offer is unknown to it. fish is
// driven for real (`complete -C`); bash's list is read by sourcing the script in bash;
// zsh's from its `verbs` array after `zsh -n` has checked the file. Services and
// accounts are covered by BashCompletionTests.
import Foundation
import KeygateTestSupport
import XCTest

final class CompletionCoverageTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    /// The verbs of `keygate --help`, aliases included.
    private func helpVerbs() throws -> Set<String> {
        let help = try Subprocess.run([PackagePaths.keygateBinary, "--help"])
        XCTAssertEqual(help.status, 0, help.err)
        let lines = help.out.split(separator: "\n", omittingEmptySubsequences: false)
        var verbs = Set<String>()
        for line in lines.drop(while: { !$0.hasPrefix("SUBCOMMANDS") }).dropFirst() {
            guard line.hasPrefix("  "), line.dropFirst(2).first?.isLowercase == true else { continue }
            let column = line.dropFirst(2).split(separator: " ", omittingEmptySubsequences: true)
            // "add, add-generic-password, add-internet-password": the names run until one lacks a comma.
            for word in column {
                verbs.insert(String(word.trimmingCharacters(in: CharacterSet(charactersIn: ","))))
                if !word.hasSuffix(",") { break }
            }
        }
        verbs.insert("help")   // every completion also offers `help VERB`
        return verbs
    }

    private func require(_ tool: String) throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) (apt-get install \(tool.split(separator: "/").last ?? ""))")
    }

    func test_helpVerbs_areReadable() throws {
        let verbs = try helpVerbs()
        XCTAssertTrue(verbs.isSuperset(of: ["get", "add", "add-generic-password", "exec", "doctor"]), "\(verbs.sorted())")
    }

    func test_bash_offersExactlyTheVerbs() throws {
        let r = try Subprocess.run(["bash", "--norc", "--noprofile", "-c",
                                    "source '\(PackagePaths.root)/completions/keygate.bash' && printf '%s\\n' $_keygate_verbs"])
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(Set(r.out.split(separator: "\n").map(String.init)), try helpVerbs())
    }

    func test_fish_offersExactlyTheVerbs_whenDrivenForReal() throws {
        try require("/usr/bin/fish")
        let r = try Subprocess.run(["/usr/bin/fish", "--no-config", "-c",
                                    "source '\(PackagePaths.root)/completions/keygate.fish'; complete -C'keygate '"])
        XCTAssertEqual(r.status, 0, r.err)
        let offered = Set(r.out.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) })
        XCTAssertEqual(offered, try helpVerbs())
        let execFlags = try Subprocess.run(["/usr/bin/fish", "--no-config", "-c",
                                            "source '\(PackagePaths.root)/completions/keygate.fish'; complete -C'keygate exec --'"])
        XCTAssertTrue(Set(execFlags.out.split(separator: "\n").compactMap { $0.split(separator: "\t").first.map(String.init) })
            .isSuperset(of: ["--env", "--stdin", "--fd", "--service", "--account"]), execFlags.out)
    }

    func test_zsh_parses_andOffersExactlyTheVerbs() throws {
        try require("/usr/bin/zsh")
        let file = PackagePaths.root + "/completions/_keygate"
        let syntax = try Subprocess.run(["/usr/bin/zsh", "-n", file])
        XCTAssertEqual(syntax.status, 0, "zsh -n: \(syntax.err)")
        let source = try String(contentsOfFile: file, encoding: .utf8)
        guard let start = source.range(of: "  verbs=(\n"), let end = source.range(of: "\n  )", range: start.upperBound..<source.endIndex) else {
            return XCTFail("no verbs=( … ) array in _keygate")
        }
        let offered = Set(source[start.upperBound..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("'"), let colon = trimmed.firstIndex(of: ":") else { return nil }
            return String(trimmed[trimmed.index(after: trimmed.startIndex)..<colon])
        })
        XCTAssertEqual(offered, try helpVerbs())
    }
}
