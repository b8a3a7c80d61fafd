// A person at a shell, for the terminal tests: an interactive bash as a fresh test
// user on a PseudoTerminal, inside that user's own secret-session (private D-Bus and
// gnome-keyring), with the keygate under test first on PATH. The binary is the one
// in KEYGATE_TERMINAL_BINARY (make check's release pass sets it to the binary
// `make install` put on PATH, which reads /etc/pam.d and the installed policies),
// else the debug build, pointed at the same PAM stack and the shipped default policy
// through its test hooks.
import Foundation
import KeygateTestSupport
import XCTest

final class TerminalShell {
    let user: TestUser
    let terminal: PseudoTerminal
    private var transcript = ""

    /// The keygate binary under test and whether it is a release (installed) one.
    static var binary: (path: String, installed: Bool) {
        if let forced = ProcessInfo.processInfo.environment["KEYGATE_TERMINAL_BINARY"], !forced.isEmpty {
            return (forced, true)
        }
        return (PackagePaths.keygateBinary, false)
    }

    /// The shipped vendor policy the binary under test reads: `make install`'s under the installed
    /// binary's prefix, or the debug build's copy in ShippedPolicyRoot.
    static func shippedDefaultPolicy() throws -> String {
        let (path, installed) = binary
        guard installed else { return try ShippedPolicyRoot.path() + "/vendor/00-default.policy" }
        let prefix = ((path as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        return prefix + "/share/keygate/policies.d/00-default.policy"
    }

    /// The line `keygate add` writes on stderr for `item` stored without --access under the shipped policy.
    static func addedWithTheDefault(_ item: String) throws -> String {
        let text = try String(contentsOfFile: PackagePaths.root + "/policies/00-default.policy", encoding: .utf8)
        let line = (text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.hasPrefix("default-access") } ?? -2) + 1
        return "keygate: stored \(item) with access user-presence: the policy's default-access (\(try shippedDefaultPolicy()):\(line) "
            + "[default]); --access none stores an item read without a password while the keychain is unlocked\n"
    }

    init(user existing: TestUser? = nil) throws {
        try Requirement.require(Requirement.isRoot, "root, to create a test user (CI runs as root)")
        let (binary, installed) = Self.binary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        if installed {
            try Requirement.require(FileManager.default.fileExists(atPath: "/etc/pam.d/keygate"),
                                    "/etc/pam.d/keygate, which `make install` puts there")
        }
        user = try existing ?? TestUser.create()
        let tools = try UserSession.stageTools()
        let binaryFolder = installed ? (binary as NSString).deletingLastPathComponent : tools
        var env = [
            "HOME": user.home, "USER": user.name, "LOGNAME": user.name, "TERM": "dumb", "LANG": "C.UTF-8",
            "PATH": "\(binaryFolder):\(tools):/usr/local/bin:/usr/bin:/bin",
        ]
        if let store = ProcessInfo.processInfo.environment["KEYGATE_STORE"], !store.isEmpty { env["KEYGATE_STORE"] = store }
        if !installed {
            // What the installed binary reads from the system, given to the debug build.
            env["KEYGATE_TEST_PAM_CONFDIR"] = try Self.pamConfdir()
            env["KEYGATE_TEST_POLICY_ROOT"] = try ShippedPolicyRoot.path()
            env["KEYGATE_TEST_KDF"] = "fast"
        }
        let rc = user.home + "/.terminal-test-bashrc"
        try "PS1='$ '\nPS2='> '\nHISTFILE=/dev/null\nbind 'set enable-bracketed-paste off' 2>/dev/null\n"
            .write(toFile: rc, atomically: true, encoding: .utf8)
        let assignments = env.keys.sorted().map { "\($0)=\(env[$0] ?? "")" }
        terminal = try PseudoTerminal(
            ["/usr/sbin/runuser", "-u", user.name, "--", "/usr/bin/env", "-i"] + assignments
                + [tools + "/secret-session", "bash", "--noprofile", "--rcfile", rc, "-i"],
            environment: TestUser.systemEnvironment)
        try terminal.expect("$ ", timeout: 60)
    }

    deinit {
        terminal.terminate()
        user.remove()
    }

    /// Types `command` followed by an echo of its exit status, and consumes the echoed line,
    /// so that what `finish()` returns starts with the program's own output.
    func start(_ command: String, statusMarker: Bool = true) throws {
        let line = statusMarker ? "\(command); echo \"[rc=$?]\"" : command
        terminal.typeLine(line)
        try terminal.expect(line + "\n")
        transcript = ""
    }

    /// Waits for `prompt`, then types `answer` once echo is off, as a person does.
    func answer(_ prompt: String, with answer: String) throws {
        try expectPrompt(prompt)
        try terminal.waitForEcho(on: false)
        terminal.typeLine(answer)
    }

    /// Waits for `question` (asked with echo on, like a y/N question) and types `answer` and Enter.
    func reply(_ question: String, with answer: String) throws {
        try expectPrompt(question)
        terminal.typeLine(answer)
    }

    /// Waits for `prompt`; fails at once, with the screen, when the command ends first.
    private func expectPrompt(_ prompt: String) throws {
        let (index, seen) = try terminal.expect(anyOf: [prompt, "[rc="])
        transcript += seen
        if index == 1 {
            let rest = (try? terminal.expect("]", timeout: 5)) ?? ""
            throw PseudoTerminalError(description: "the command ended (rc=\(rest)) before asking '\(prompt)'; it showed:\n\(transcript)")
        }
    }

    /// Waits for `text` on the screen (not a prompt for a secret).
    func expect(_ text: String, timeout: TimeInterval = 60) throws {
        transcript += try terminal.expect(text, timeout: timeout)
    }

    /// Sends a control key (PseudoTerminal.interrupt, .suspend) once echo is off at a prompt.
    func pressAtPrompt(_ prompt: String, _ key: String) throws {
        try expectPrompt(prompt)
        try terminal.waitForEcho(on: false)
        terminal.type(key)
    }

    /// Waits for the status line, and returns the screen since `start` (without that line) and the status.
    func finish(timeout: TimeInterval = 60) throws -> (screen: String, status: Int32) {
        try finish(answering: [:], timeout: timeout)
    }

    /// Waits for the status line, answering each prompt in `answers` (prompt text to answer) that
    /// comes first, as often as it comes.
    func finish(answering answers: [String: String], timeout: TimeInterval = 60) throws -> (screen: String, status: Int32) {
        let prompts = answers.keys.sorted()
        while true {
            let (index, seen) = try terminal.expect(anyOf: prompts + ["[rc="], timeout: timeout)
            if index == prompts.count {
                transcript += String(seen.dropLast("[rc=".count))
                let digits = try terminal.expect("]")
                try terminal.expect("$ ")
                defer { transcript = "" }
                return (transcript, Int32(digits.dropLast()) ?? -1)
            }
            transcript += seen
            try terminal.waitForEcho(on: false)
            terminal.typeLine(answers[prompts[index]] ?? "")
        }
    }

    /// Runs a command that asks nothing and returns its screen and status.
    func run(_ command: String) throws -> (screen: String, status: Int32) {
        try start(command)
        return try finish()
    }

    /// `stty -a` on this terminal, from the shell, as a person would check it.
    func sttySettings() throws -> String {
        try run("stty -a").screen
    }

    private static func pamConfdir() throws -> String {
        let dir = NSTemporaryDirectory() + "keygate-terminal-pam-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        // As CLIUserHarness's: pam_unix without its fail delay, which the release pass, typing into
        // the installed build through the shipped stack, keeps (docs/DECISIONS.md, "The test stack's
        // pam_unix has no fail delay").
        for service in ["keygate", "keygate-passcode"] {
            try "auth required pam_unix.so nodelay\naccount required pam_unix.so\n"
                .write(toFile: dir + "/" + service, atomically: true, encoding: .utf8)
        }
        return dir
    }
}

/// The shipped default policy (policies/*.policy) as the vendor layer of a test policy root, so the
/// debug build decides as the installed binary does with `make install`'s policies.
enum ShippedPolicyRoot {
    private static let made: Result<String, any Error> = Result {
        let root = NSTemporaryDirectory() + "keygate-shipped-policy-\(getpid())"
        let fm = FileManager.default
        for layer in ["vendor", "admin", "user"] {
            try fm.createDirectory(atPath: root + "/" + layer, withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o755])
        }
        for file in try fm.contentsOfDirectory(atPath: PackagePaths.root + "/policies") where file.hasSuffix(".policy") {
            try fm.copyItem(atPath: PackagePaths.root + "/policies/" + file, toPath: root + "/vendor/" + file)
            try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root + "/vendor/" + file)
        }
        return root
    }

    static func path() throws -> String { try made.get() }
}
