// One configuration value (issue 37, part 4; docs/ARCHITECTURE.md): the process environment is
// read, and written, only at the edges named here. Every other file takes what it needs from a
// `KeygateEnvironment` its caller passes down. The check reads every Swift source file and fails
// naming any other file that calls getenv, secure_getenv, setenv, unsetenv, clearenv or putenv,
// touches `environ`, asks ProcessEnvironment or Foundation's ProcessInfo for the environment, or
// builds a KeygateEnvironment from the process (`KeygateEnvironment.process()`).
import Foundation
import KeygateTestSupport
import XCTest

enum EnvironmentReadCheck {
    /// The files that may read (or set) the process environment, each with why. Paths are below Sources/.
    static let edges: [String: String] = [
        "KeygateCore/System/ProcessEnvironment.swift": "the reader: a snapshot of environ",
        "KeygateCore/System/KeygateEnvironment.swift": "the value, and `process()` for the edges",
        "KeygateCore/System/Spawn.swift": "a child given no environment inherits the process's whole, unread",
        "KeygateCore/Keys/TPM/TSS2Functions.swift": "sets TSS2_LOG before tpm2-tss is loaded (its own logging off)",
        "KeygateCLI/KeygateMain.swift": "the CLI's main",
        "Keygate/API/Keychain.swift": "the public Swift API, for library users",
        "Keygate/Operations/KeychainOperations.swift": "its public init, for library users and the CLI",
        "KeygateSecurity/KeygateSecurityConfiguration.swift": "the Apple layer's configuration (SecItem*, LAContext)",
        "PAMKeygate/HelperMain.swift": "keygate-pam-helper's main",
        "keygate-secret-service/main.swift": "keygate-secret-service's main: the daemon's environment, read once at its start",
        "KeygateGatekeeper/GatekeeperMain.swift": "keygate-gatekeeper's main: keeps the test hooks, then clears and sets the environment",
        "KeygateGatekeeper/TestSystemBus.swift": "test-hook builds: the gatekeeper's private system bus, set by its main",
    ]

    /// What counts as a read of the process environment. `environ` alone (not `environment`).
    static let pattern: NSRegularExpression? = try? NSRegularExpression(pattern: [
        #"(?<![.\w])(secure_getenv|getenv|setenv|unsetenv|clearenv|putenv)\("#,
        #"(?<![\w])environ(?!\w)"#,
        #"ProcessEnvironment\s*\."#,
        #"processInfo\s*\.\s*environment"#,
        #"KeygateEnvironment\s*\.\s*process\s*\("#,
    ].joined(separator: "|"))

    /// Every read outside the edges, as "file: line"; `files` maps a path below Sources/ to its text.
    static func reads(in files: [String: String], edges: [String: String] = edges) -> [String] {
        guard let pattern else { return ["the pattern did not compile"] }
        var found: [String] = []
        for (file, text) in files.sorted(by: { $0.key < $1.key }) where edges[file] == nil {
            for line in text.split(separator: "\n") {
                let s = line.trimmingCharacters(in: .whitespaces)
                guard !s.hasPrefix("//"), !s.hasPrefix("///") else { continue }
                if pattern.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) != nil {
                    found.append("\(file): \(s)")
                }
            }
        }
        return found
    }

    /// Every Swift file below Sources/, by path below Sources/.
    static func sources() throws -> [String: String] { try PackagePaths.swiftSources() }
}

final class EnvironmentReadTests: XCTestCase {
    func test_theProcessEnvironmentIsReadOnlyAtTheEdges() throws {
        let files = try EnvironmentReadCheck.sources()
        XCTAssertGreaterThan(files.count, 100, "the sources were read")
        XCTAssertEqual(EnvironmentReadCheck.reads(in: files), [],
                       "take the variable from the KeygateEnvironment the caller passes down (docs/ARCHITECTURE.md, \"One configuration value\")")
    }

    /// The list stays short and true: each edge exists and still reads (a file that stopped leaves it).
    func test_everyEdgeIsAFileThatReadsTheEnvironment() throws {
        let files = try EnvironmentReadCheck.sources()
        XCTAssertEqual(EnvironmentReadCheck.edges.keys.filter { files[$0] == nil }.sorted(), [],
                       "an edge that no longer exists: take it off the list")
        let silent = EnvironmentReadCheck.edges.keys.filter { edge in
            guard let text = files[edge] else { return false }
            return EnvironmentReadCheck.reads(in: [edge: text], edges: [:]).isEmpty
        }
        XCTAssertEqual(silent.sorted(), [], "an edge that no longer reads the environment: take it off the list")
    }

    func test_aReadPlantedInALayerFails() throws {
        var files = try EnvironmentReadCheck.sources()
        // What the sources hold now (nothing, when the rule holds): the check must add exactly the planted line.
        let before = Set(EnvironmentReadCheck.reads(in: files))
        let storage = "KeygateStorage/StoreSelection.swift"
        let text = try XCTUnwrap(files[storage])
        // Each way of reading is caught, and a comment or a word that only contains one is not.
        for planted in ["let planted = getenv(\"HOME\")", "var p = environ", "let e = ProcessEnvironment.snapshot()",
                        "_ = setenv(\"A\", \"1\", 1)", "let e = ProcessInfo.processInfo.environment",
                        "let e = KeygateEnvironment.process()", "_ = secure_getenv(\"HOME\")"] {
            files[storage] = text + "\n" + planted + "\n"
            XCTAssertEqual(Set(EnvironmentReadCheck.reads(in: files)).subtracting(before), ["\(storage): \(planted)"], planted)
        }
        for innocent in ["// getenv(\"HOME\") is not read here", "let environment = caller.environment",
                         "func f(environment: KeygateEnvironment)", "x.getenvironment()"] {
            files[storage] = text + "\n" + innocent + "\n"
            XCTAssertEqual(Set(EnvironmentReadCheck.reads(in: files)).subtracting(before), [], innocent)
        }
        // An edge may read; the same line anywhere else may not.
        files[storage] = text
        let edge = "KeygateCLI/KeygateMain.swift"
        files[edge] = (files[edge] ?? "") + "\nlet planted = getenv(\"HOME\")\n"
        XCTAssertEqual(Set(EnvironmentReadCheck.reads(in: files)).subtracting(before), [])
    }
}
