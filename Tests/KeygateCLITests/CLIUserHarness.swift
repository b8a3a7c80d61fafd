// Runs the built `keygate` binary as a real, freshly created non-root user, in
// that user's own private D-Bus session with gnome-keyring, authenticating through
// real pam_unix. The PAM service file lives in a temporary folder (a test-hook
// build reads KEYGATE_TEST_PAM_CONFDIR); the password reaches keygate only through
// an askpass program that reads it from a 0600 file in the user's home.
import Foundation
import KeygateTestSupport
import XCTest

final class CLIUserHarness {
    let user: TestUser
    let confdir: String
    /// The user is borrowed from TestUserPool (and given back, reset, at the end) rather than made for this test.
    let sharesUser: Bool
    var askpass: String { user.home + "/askpass" }
    var promptLog: String { user.home + "/prompts" }

    /// `sharedUser`: borrow a pooled account (reset between tests) instead of creating one. Only for tests
    /// that neither change the login password, nor lock the user out, nor kill the user's processes from
    /// outside; those keep an account of their own.
    /// `uid`: create the user with this uid (a removed account's).
    init(sharedUser: Bool = false, uid: UInt32? = nil) throws {
        try Requirement.require(Requirement.isRoot, "root, to create a test user (CI runs as root)")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary),
                                "the built keygate binary at \(PackagePaths.keygateBinary) (run swift build)")
        user = sharedUser ? try TestUserPool.borrow() : try TestUser.create(uid: uid)
        sharesUser = sharedUser
        confdir = NSTemporaryDirectory() + "keygate-pam-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: confdir, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        // The stack pam.d/keygate and pam.d/keygate-passcode resolve to on Debian, real pam_unix,
        // without its 2-second delay after a wrong password: the delay is pam_unix's, not Keygate's,
        // and the release pass types wrong passwords into the installed build through the shipped
        // stack, delay included (docs/DECISIONS.md, "The test stack's pam_unix has no fail delay").
        for service in ["keygate", "keygate-passcode"] {
            try "auth required pam_unix.so nodelay\naccount required pam_unix.so\n"
                .write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: confdir + "/" + service)
        }
        let script = """
        #!/bin/sh
        # Test askpass: counts each call (one line each), keeps the prompt text, and
        # answers from a private file.
        echo prompt >> "$HOME/prompts"
        printf '%s\\n' "$1" >> "$HOME/prompt-texts"
        # Queued answers first (one per line), then the standing answer.
        if [ -s "$HOME/queue" ]; then
            head -n1 "$HOME/queue"
            tail -n +2 "$HOME/queue" > "$HOME/queue.rest"; mv "$HOME/queue.rest" "$HOME/queue"
        else
            cat "$HOME/answer"
        fi
        """
        try writeUserFile("askpass", script, mode: 0o700)
        try answerWith(user.password)
        try writeUserFile("prompts", "", mode: 0o600)
    }

    deinit {
        if sharesUser { TestUserPool.giveBack(user) } else { user.remove() }
        try? FileManager.default.removeItem(atPath: confdir)
    }

    /// What the askpass program answers from now on.
    func answerWith(_ password: String) throws {
        try writeUserFile("answer", password, mode: 0o600)
    }

    /// Answers for the next prompts, in order, before the standing answer resumes.
    func queueAnswers(_ answers: [String]) throws {
        try writeUserFile("queue", answers.map { $0 + "\n" }.joined(), mode: 0o600)
    }

    /// How many times keygate has asked for a password so far.
    func promptCount() throws -> Int {
        let text = (try? String(contentsOfFile: promptLog, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").count
    }

    /// The prompt texts keygate showed, for assertion messages.
    func prompts() -> String { (try? String(contentsOfFile: user.home + "/prompt-texts", encoding: .utf8)) ?? "" }

    func writeUserFile(_ name: String, _ content: String, mode: Int) throws {
        let path = user.home + "/" + name
        try content.write(toFile: path, atomically: false, encoding: .utf8)
        _ = try Subprocess.run(["chown", "\(user.name):", path])
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    /// Runs a shell script as the user in one private session (so the kernel keyring
    /// cache lives across the script's steps), with askpass set unless told not to.
    func run(_ script: String, askpass useAskpass: Bool = true, extraEnvironment: [String: String] = [:],
             stdin: Data? = nil, timeout: TimeInterval = 120, wrapper: [String] = [],
             session: String = "secret-session") throws -> ProcessResult {
        var env = ["KEYGATE_TEST_PAM_CONFDIR": confdir, "KEYGATE_TEST_KDF": "fast",
                   "KEYGATE_TEST_POLICY_ROOT": EmptyPolicyRoot.path]
        if useAskpass { env["KEYGATE_ASKPASS"] = askpass }
        env.merge(extraEnvironment) { _, new in new }
        return try UserSession.run(as: user, script: script, environment: env, stdin: stdin, timeout: timeout, wrapper: wrapper,
                                   session: session)
    }

    /// What `keygate status` says of the user's keychain.
    enum KeychainState: String {
        case locked, unlocked
    }

    /// Asserts that `keygate status`, run as the user, says the keychain is in `state`; a failure
    /// shows the whole run after `message`.
    func assertKeychain(_ state: KeychainState, _ message: String = "", file: StaticString = #filePath,
                        line: UInt = #line) throws {
        let status = try run("keygate status", askpass: false)
        XCTAssertTrue(status.out.contains("state: \(state.rawValue)"),
                      message.isEmpty ? status.summary : "\(message): \(status.summary)", file: file, line: line)
    }
}

extension ProcessResult {
    /// A one-line account of a run, for assertion messages.
    var summary: String { "exit \(status)\nstdout: \(out)\nstderr: \(err)" }

    /// The `name=value` lines a test script printed.
    var values: [String: String] {
        var found: [String: String] = [:]
        for line in out.split(separator: "\n") {
            if let eq = line.firstIndex(of: "=") { found[String(line[..<eq])] = String(line[line.index(after: eq)...]) }
        }
        return found
    }

    /// Asserts the `name=value` lines a test script printed, one assertion a name, in the order
    /// given; a failure names the line and shows the whole run.
    func assertValues(_ expected: KeyValuePairs<String, String>, file: StaticString = #filePath, line: UInt = #line) {
        let found = values
        for (name, value) in expected {
            XCTAssertEqual(found[name], value, "\(name): \(summary)", file: file, line: line)
        }
    }
}
