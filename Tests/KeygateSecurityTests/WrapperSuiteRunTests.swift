// Runs the wrapper suites of Tests/AppleWrapperSuites the way a porting developer meets
// them: as the suites' own XCTest runs, in child processes of this test binary, against one
// keychain that this test creates and unlocks first, as a user's is. Each suite runs twice in
// a row on that keychain (the first run's leftovers must not break the second), with an
// askpass program and no terminal, then once more with no askpass and no terminal: items
// without access control must never ask, and items with it fail at once
// (errSecInteractionNotAllowed), never hang. The real stack throughout: gnome-keyring on the
// private session bus (or the embedded store under KEYGATE_STORE=embedded), real PAM
// (pam_matrix), the real kernel keyring, the real gatekeeper; no test hook in the suites.
import Foundation
import Keygate
import KeygateTestSupport
import XCTest

final class WrapperSuiteRunTests: XCTestCase {
    static let suites = ["ChainKeychainTests", "DefaultsKeychainTests", "CodableVaultTests", "SharedKeychainTests"]
    /// The services the suites store their items under (Tests/AppleWrapperSuites/Suites).
    static let services = ["com.example.chain-tests", "com.example.defaults-tests", "com.example.codable-tests",
                           "com.example.shared-tests", "com.example.shared-tests.old"]

    /// One suite run's figures: tests run (XCTest's summary line), tests failed and skipped
    /// (one "Test Case '…' failed (" or "skipped (" line each; the summary counts assertions).
    struct Figures: Equatable, CustomStringConvertible {
        let executed: Int
        let failed: Int
        let skipped: Int
        var description: String { "\(executed - failed - skipped)/\(executed) passed" + (skipped > 0 ? ", \(skipped) skipped" : "") }

        static func parse(_ output: String) -> Figures? {
            let pattern = try? NSRegularExpression(pattern: #"Executed (\d+) tests?, with \d+ failures?"#)
            let text = output as NSString
            guard let match = pattern?.matches(in: output, range: NSRange(location: 0, length: text.length)).last,
                  let executed = Int(text.substring(with: match.range(at: 1))) else { return nil }
            let lines = output.components(separatedBy: "\n").filter { $0.hasPrefix("Test Case '") }
            return Figures(executed: executed, failed: lines.filter { $0.contains("' failed (") }.count,
                           skipped: lines.filter { $0.contains("' skipped (") }.count)
        }
    }

    func test_eachWrapperSuite_passesTwiceInARow_thenOnceMoreWithNoAskpassAndNoTerminal() throws {
        let keychain = try InProcessKeychain()
        defer {
            // The suites' items stay in the session's Secret Service otherwise, where every later test
            // that lists items (bash completion, list) would find them.
            let operations = try? KeychainOperations(prompter: ScriptedPrompter([keychain.password]))
            for service in Self.services { _ = try? operations?.delete(matching: ItemQuery(service: service)) }
            keychain.tearDown()
        }
        // The developer's keychain: created and unlocked once, before any suite runs.
        _ = try KeychainOperations(prompter: ScriptedPrompter([keychain.password])).initialize()
        let askpass = try AskpassScript(password: keychain.password)
        defer { askpass.remove() }

        let store = ProcessInfo.processInfo.environment["KEYGATE_STORE"] ?? "secret-service"
        var table: [String: [Figures]] = [:]
        for run in 1...3 {
            for suite in Self.suites {
                var env = ProcessInfo.processInfo.environment
                env["KEYGATE_WRAPPER_SUITE_RUN"] = "1"
                env["KEYGATE_ACCESS_GROUPS"] = "TEAM.shared,TEAM.other"
                for name in ["KEYGATE_ASKPASS", "SUDO_ASKPASS", "SSH_ASKPASS", "DISPLAY", "WAYLAND_DISPLAY"] { env[name] = nil }
                if run < 3 { env["KEYGATE_ASKPASS"] = askpass.path }
                // setsid: no controlling terminal in any run; standard input is /dev/null.
                let result = try Subprocess.run(["setsid", "-w", CommandLine.arguments[0], "AppleWrapperSuites.\(suite)"],
                                                environment: env, timeout: 300)
                let output = result.out + result.err
                let figures = try XCTUnwrap(Figures.parse(output), "run \(run) of \(suite) printed no summary:\n\(output.suffix(3000))")
                table[suite, default: []].append(figures)
                XCTAssertEqual(result.status, 0, "run \(run) of \(suite) (\(store)) failed:\n\(Self.failures(in: output))")
                XCTAssertEqual(figures.failed, 0, "run \(run) of \(suite)")
                XCTAssertEqual(figures.skipped, 0, "run \(run) of \(suite): a suite test skipped")
                XCTAssertGreaterThanOrEqual(figures.executed, 5, "run \(run) of \(suite) ran too few tests")
            }
        }
        for suite in Self.suites {
            let runs = table[suite] ?? []
            XCTAssertEqual(Set(runs.map(\.executed)).count, 1, "\(suite): every run ran the same tests: \(runs)")
            print("WRAPPER SUITE \(suite) [\(store)]: " + runs.enumerated().map { "run \($0.offset + 1) \($0.element)" }.joined(separator: "; "))
        }
    }

    /// The failing assertions of a child run, for the message.
    private static func failures(in output: String) -> String {
        output.components(separatedBy: "\n").filter { $0.contains("error:") || $0.contains("failed (") }.prefix(40).joined(separator: "\n")
    }
}

/// An askpass program that answers with the test user's password, read from a file only the
/// test's user can read (never in argv or the environment).
private struct AskpassScript {
    let path: String
    private let folder: String

    init(password: String) throws {
        folder = NSTemporaryDirectory() + "keygate-askpass-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let secret = folder + "/password"
        _ = FileManager.default.createFile(atPath: secret, contents: Data(password.utf8), attributes: [.posixPermissions: 0o600])
        path = folder + "/askpass"
        _ = FileManager.default.createFile(atPath: path, contents: Data("#!/bin/sh\ncat '\(secret)'\necho\n".utf8),
                                       attributes: [.posixPermissions: 0o700])
    }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }
}
