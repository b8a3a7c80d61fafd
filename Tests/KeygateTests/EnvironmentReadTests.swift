// One configuration value (docs/ARCHITECTURE.md): the process environment is read, and written,
// only at the edges named here. Every other file takes what it needs from a `KeygateEnvironment`
// its caller passes down. The check reads every Swift source file and fails naming any other file
// that calls getenv, secure_getenv, setenv, unsetenv, clearenv or putenv, touches `environ`, asks
// ProcessEnvironment or Foundation's ProcessInfo for the environment, or builds a
// KeygateEnvironment from the process (`KeygateEnvironment.process()`).
// Two more rules keep the value typed: no file but its parsers looks a variable up by its name
// (`VariableLookupCheck`), and only TestHooks.swift (and the gatekeeper's private bus) asks the
// build flag KEYGATE_TEST_HOOKS (`TestHookFlagCheck`).
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

/// A variable looked up by its name: a subscript read with a variable's name (an assignment sets a
/// child's variable, and is allowed), a KEYGATE_TEST_* name, a filter on a variable's name, or one
/// of the by-name accessors. Only the parsers of the configuration value may.
enum VariableLookupCheck {
    static let parsers: Set<String> = ["KeygateCore/System/KeygateEnvironment.swift", "KeygateCore/System/TestHooks.swift"]

    static let pattern: NSRegularExpression? = try? NSRegularExpression(pattern: [
        #"\[\s*"[A-Z][A-Z0-9_]*"\s*\](?!\s*=[^=])"#,
        #""KEYGATE_TEST_"#,
        #"\.key\s*(==|!=)\s*"[A-Z][A-Z0-9_]*""#,
        #"\.key\.hasPrefix\(\s*"[A-Z]"#,
        #"\b(nonEmpty|testHook|testHookPath|variable)\(\s*"[A-Z][A-Z0-9_]*"\s*\)"#,
    ].joined(separator: "|"))

    /// Every look-up outside the parsers, as "file: line".
    static func lookups(in files: [String: String]) -> [String] {
        guard let pattern else { return ["the pattern did not compile"] }
        var found: [String] = []
        for (file, text) in files.sorted(by: { $0.key < $1.key }) where !parsers.contains(file) {
            for line in text.split(separator: "\n") {
                let s = line.trimmingCharacters(in: .whitespaces)
                guard !s.hasPrefix("//") else { continue }
                if pattern.firstMatch(in: s, range: NSRange(location: 0, length: (s as NSString).length)) != nil {
                    found.append("\(file): \(s)")
                }
            }
        }
        return found
    }
}

/// Where the build flag KEYGATE_TEST_HOOKS decides something: the hooks' parsing, and the
/// gatekeeper's private system bus (mount code that must not be in the release setuid binary).
enum TestHookFlagCheck {
    static let allowed: Set<String> = ["KeygateCore/System/TestHooks.swift", "KeygateGatekeeper/TestSystemBus.swift"]

    static func uses(in files: [String: String]) -> [String] {
        files.sorted(by: { $0.key < $1.key }).flatMap { file, text in
            text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { $0.hasPrefix("#if") && $0.contains("KEYGATE_TEST_HOOKS") }.map { "\(file): \($0)" }
        }
    }
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

    /// No file below the parsers looks a variable up by its name: each reads a field of the value.
    func test_noFileButTheParsersLooksAVariableUpByName() throws {
        let files = try EnvironmentReadCheck.sources()
        XCTAssertEqual(VariableLookupCheck.lookups(in: files), [],
                       "read a field of KeygateEnvironment (or its TestHooks); add the variable there (docs/ARCHITECTURE.md, \"One configuration value\")")
        XCTAssertEqual(VariableLookupCheck.parsers.filter { files[$0] == nil }, [], "a parser that no longer exists")
    }

    func test_aLookUpPlantedInALayerFails() throws {
        var files = try EnvironmentReadCheck.sources()
        let file = "KeygateStorage/StoreSelection.swift"
        let text = try XCTUnwrap(files[file])
        for planted in ["let home = environment[\"HOME\"]", "if let s = env[ \"KEYGATE_STORE\" ], !s.isEmpty {",
                        "let hook = \"KEYGATE_TEST_SOMETHING\"", "let kept = vars.filter { $0.key != \"DISPLAY\" }",
                        "let kept = vars.filter { $0.key.hasPrefix(\"LC_\") }", "let d = environment.nonEmpty(\"DISPLAY\")",
                        "let x = ProcessEnvironment.variable(\"HOME\")"] {
            files[file] = text + "\n" + planted + "\n"
            XCTAssertEqual(VariableLookupCheck.lookups(in: files), ["\(file): \(planted)"], planted)
        }
        for innocent in ["env[\"SSH_ASKPASS\"] = me", "// environment[\"HOME\"] is not read here", "let home = environment.home",
                         "let option = \"PATH\"", "let hint = \"set KEYGATE_STORE=embedded\""] {
            files[file] = text + "\n" + innocent + "\n"
            XCTAssertEqual(VariableLookupCheck.lookups(in: files), [], innocent)
        }
        // A parser may.
        files[file] = text
        let parser = "KeygateCore/System/KeygateEnvironment.swift"
        files[parser] = (files[parser] ?? "") + "\nlet planted = variables[\"HOME\"]\n"
        XCTAssertEqual(VariableLookupCheck.lookups(in: files), [])
    }

    /// The build flag decides hooks in one place: release builds are kept from them by TestHooks alone.
    func test_theTestHookFlagIsAskedOnlyWhereTheHooksAreParsed() throws {
        let files = try EnvironmentReadCheck.sources()
        let uses = TestHookFlagCheck.uses(in: files)
        XCTAssertEqual(uses.filter { use in !TestHookFlagCheck.allowed.contains { use.hasPrefix($0 + ":") } }, [],
                       "ask TestHooks (a field, or TestHooks.compiledIn) instead of #if KEYGATE_TEST_HOOKS")
        XCTAssertEqual(uses.count, 2, "\(uses)")
        var planted = files
        planted["Keygate/GatekeeperClient/GateClient.swift"] = (files["Keygate/GatekeeperClient/GateClient.swift"] ?? "") + "\n#if !KEYGATE_TEST_HOOKS\n#endif\n"
        XCTAssertEqual(TestHookFlagCheck.uses(in: planted).count, 3)
    }
}
