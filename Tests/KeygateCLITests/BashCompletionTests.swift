// completions/keygate.bash, sourced into a real bash and driven through
// COMP_WORDS/COMP_CWORD as readline would. Services and accounts come from a
// stand-in `keygate` that prints `keygate list --json`'s format (so the test needs
// no keychain) and records the arguments it got; the real binary is checked too.
import Foundation
import KeygateTestSupport
import XCTest

final class BashCompletionTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var folder = ""

    override func setUpWithError() throws {
        folder = NSTemporaryDirectory() + "keygate-completion-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Two generic items (one label holding a quoted "service":"…" to prove escaped text is skipped)
        // and one internet password.
        let json = #"[{"class":"genp","service":"vpn","account":"alice","label":"say \"service\":\"evil\"","comment":null},{"class":"genp","service":"vpn","account":"bob","label":null},{"class":"inet","server":"example.org","protocol":"https","port":0,"path":"","securityDomain":"","authenticationType":"","account":"carol","label":null}]"#
        let stub = "#!/bin/sh\necho \"$*\" >> '\(folder)/args'\nprintf '%s\\n' '\(json)'\n"
        try stub.write(toFile: folder + "/keygate", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder + "/keygate")
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// The completions bash offers for `words` (the last one is the word being completed).
    private func complete(_ words: [String], program: String? = nil) throws -> [String] {
        let quoted = ([program ?? folder + "/keygate"] + words).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let script = """
            source '\(PackagePaths.root)/completions/keygate.bash' || exit 3
            COMP_WORDS=(\(quoted.joined(separator: " "))); COMP_CWORD=\(words.count)
            COMPREPLY=(); _keygate; printf '%s\\n' "${COMPREPLY[@]}"
            """
        let r = try Subprocess.run(["bash", "--norc", "--noprofile", "-c", script])
        XCTAssertEqual(r.status, 0, r.err)
        return r.out.split(separator: "\n").map(String.init)
    }

    func test_verbs_completeFromPrefix_includingDoctor() throws {
        XCTAssertEqual(try complete(["doc"]), ["doctor", "docker-credential"])
        XCTAssertEqual(try complete(["doct"]), ["doctor"])
        XCTAssertEqual(Set(try complete(["de"])), ["delete", "delete-generic-password", "delete-internet-password", "default-keychain"])
        XCTAssertEqual(try complete(["--askpass", "/bin/true", "li"]), ["list", "list-keychains"],
                       "a top-level option's value is not the verb")
    }

    func test_flags_areTheVerbsOwn() throws {
        XCTAssertEqual(Set(try complete(["add", "--acc"])), ["--account", "--accessible", "--access"])
        XCTAssertEqual(Set(try complete(["doctor", "-"])), ["--json", "--askpass", "-h", "--help"])
        XCTAssertFalse(try complete(["get", "--"]).contains("--update"), "get has no --update")
        XCTAssertEqual(Set(try complete(["add", "--accessible", "after"])), ["after-first-unlock", "after-first-unlock-this-device-only"])
        XCTAssertEqual(try complete(["policy", "ex"]), ["explain"])
    }

    /// Every --access name, the fingerprint ones included, in bash, and the same words in zsh and fish.
    func test_access_offersBiometryAny_biometryCurrentSet_andCurrentSet_inEveryShell() throws {
        XCTAssertEqual(Set(try complete(["add", "--access", "biometry"])), ["biometry-any", "biometry-current-set"])
        XCTAssertEqual(try complete(["add", "--access", "cur"]), ["current-set"])
        for file in ["_keygate", "keygate.fish"] {
            let text = try String(contentsOfFile: PackagePaths.root + "/completions/" + file, encoding: .utf8)
            let line = try XCTUnwrap(text.split(separator: "\n").first { $0.contains("access") && $0.contains("user-presence") }, file)
            for name in ["user-presence", "device-passcode", "biometry-any", "biometry-current-set", "current-set", "none"] {
                XCTAssertTrue(line.split(whereSeparator: { " '():".contains($0) }).contains(Substring(name)), "\(file): \(name) in \(line)")
            }
        }
    }

    func test_services_comeFromListJSON_andSkipEscapedText() throws {
        XCTAssertEqual(Set(try complete(["get", "-s", ""])), ["vpn", "example.org"])
        XCTAssertFalse(try complete(["get", "-s", "ev"]).contains("evil"))
        let args = try String(contentsOfFile: folder + "/args", encoding: .utf8)
        XCTAssertTrue(args.contains("list --all-classes --json"), args)
    }

    func test_accounts_areNarrowedByTheServiceGiven() throws {
        _ = try complete(["get", "-s", "vpn", "-a", ""])
        let args = try String(contentsOfFile: folder + "/args", encoding: .utf8)
        XCTAssertTrue(args.contains("list --all-classes --json -s vpn"), "the -s value is passed to keygate list: \(args)")
        XCTAssertEqual(try complete(["exists", "-a", "a"]), ["alice"])
    }

    func test_realBinary_withNoItems_completesNothing_andPrintsNoError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary), "a built keygate")
        XCTAssertEqual(try complete(["get", "-s", ""], program: PackagePaths.keygateBinary), [],
                       "without a reachable keychain the list is empty, never an error text")
        XCTAssertEqual(try complete(["sta"], program: PackagePaths.keygateBinary), ["status"])
    }
}
