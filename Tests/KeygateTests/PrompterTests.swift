// Prompters: how SystemPrompter chooses, the prompt text of the PAM conversation,
// askpass programs run for real (shell scripts), and the terminal prompter driven
// through a real pseudo-terminal (python3's pty and termios modules), re-running
// this test binary as the program on the terminal.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class PrompterTests: XCTestCase {
    private var folder = ""

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kg-prompt-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) }
    }

    // MARK: choosing where to ask

    private func choice(_ env: [String: String], forced: String? = nil, tty: Bool) throws -> SystemPrompter.Choice {
        try SystemPrompter(askpass: forced, environment: KeygateEnvironment(env)).choice(terminalAvailable: { tty })
    }

    private func code(_ body: () throws -> Any) -> KeychainError.Code? {
        do { _ = try body(); return nil } catch let error as KeychainError { return error.code } catch { return nil }
    }

    func test_choice_prefersTerminal_overKEYGATE_ASKPASS_byDefault() throws {
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask"], tty: true), .terminal)
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask"], tty: false), .askpass("/bin/ask"))
    }

    func test_choice_usesForcedAskpass_evenWithTerminal() throws {
        XCTAssertEqual(try choice([:], forced: "/opt/ask", tty: true), .askpass("/opt/ask"))
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "never"], forced: "/opt/ask", tty: true),
                       .askpass("/opt/ask"))
    }

    func test_choice_followsKEYGATE_ASKPASS_REQUIRE() throws {
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "force"], tty: true), .askpass("/bin/ask"))
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "prefer"], tty: true), .askpass("/bin/ask"))
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS_REQUIRE": "prefer"], tty: true), .terminal)
        XCTAssertEqual(try choice(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "never"], tty: true), .terminal)
        XCTAssertEqual(code { try choice(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "never"], tty: false) },
                       .interactionNotAllowed)
        XCTAssertEqual(code { try choice(["KEYGATE_ASKPASS_REQUIRE": "force"], tty: true) }, .interactionNotAllowed)
    }

    /// keygate(1)'s precedence table, row by row: each row wins over every row below it.
    func test_choice_followsThePrecedenceTable_optionsFirst_thenForce_thenPinentry_thenTerminal() throws {
        let everything = ["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "force", "KEYGATE_PINENTRY": "/bin/pin"]
        func pick(_ env: [String: String], forced: String? = nil, pinentry: Bool = false, tty: Bool) throws -> SystemPrompter.Choice {
            try SystemPrompter(askpass: forced, environment: KeygateEnvironment(env), pinentry: pinentry).choice(terminalAvailable: { tty })
        }
        // 1. --askpass
        XCTAssertEqual(try pick(everything, forced: "/opt/ask", pinentry: true, tty: true), .askpass("/opt/ask"))
        // 2. --pinentry (KEYGATE_PINENTRY names the program, else `pinentry`)
        XCTAssertEqual(try pick(everything, pinentry: true, tty: true), .pinentry("/bin/pin"))
        XCTAssertEqual(try pick([:], pinentry: true, tty: true), .pinentry("pinentry"))
        // 3. KEYGATE_ASKPASS_REQUIRE=force beats KEYGATE_PINENTRY and the terminal
        XCTAssertEqual(try pick(everything, tty: true), .askpass("/bin/ask"))
        // 4. KEYGATE_PINENTRY beats prefer, the terminal and a plain KEYGATE_ASKPASS
        XCTAssertEqual(try pick(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "prefer", "KEYGATE_PINENTRY": "/bin/pin"], tty: true),
                       .pinentry("/bin/pin"))
        XCTAssertEqual(try pick(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "never", "KEYGATE_PINENTRY": "/bin/pin"], tty: false),
                       .pinentry("/bin/pin"), "never forbids askpass, not pinentry")
        // 5. prefer beats the terminal
        XCTAssertEqual(try pick(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "prefer"], tty: true), .askpass("/bin/ask"))
        // 6. the terminal beats a plain KEYGATE_ASKPASS
        XCTAssertEqual(try pick(["KEYGATE_ASKPASS": "/bin/ask"], tty: true), .terminal)
        // 7. KEYGATE_ASKPASS without a terminal, unless never
        XCTAssertEqual(try pick(["KEYGATE_ASKPASS": "/bin/ask"], tty: false), .askpass("/bin/ask"))
        XCTAssertEqual(code { try pick(["KEYGATE_ASKPASS": "/bin/ask", "KEYGATE_ASKPASS_REQUIRE": "never"], tty: false) },
                       .interactionNotAllowed)
        // 8. nothing: interaction not allowed (36)
        XCTAssertEqual(code { try pick([:], tty: false) }, .interactionNotAllowed)
    }

    func test_choice_isUnavailable_withoutTerminalAndAskpass() throws {
        XCTAssertEqual(code { try choice([:], tty: false) }, .interactionNotAllowed)
        XCTAssertEqual(code { try choice(["KEYGATE_ASKPASS": ""], tty: false) }, .interactionNotAllowed)
    }

    /// Run for real: with no controlling terminal (a child in a new session when this
    /// process has one) and no askpass, ensureAvailable throws at once, with the advice.
    func test_systemPrompter_ensureAvailable_throwsAtOnce_withoutTerminalOrAskpass() throws {
        let env = ProcessInfo.processInfo.environment
        if TerminalPrompter.isAvailable {
            XCTAssertNil(env["KEYGATE_TEST_NOTTY_CHILD"], "setsid did not drop the controlling terminal")
            guard env["KEYGATE_TEST_NOTTY_CHILD"] == nil else { return }
            var childEnv = env
            childEnv["KEYGATE_TEST_NOTTY_CHILD"] = "1"
            let run = try Subprocess.run(["setsid", "-w", CommandLine.arguments[0], "KeygateTests.PrompterTests/\(#function.dropLast(2))"],
                                         environment: childEnv, timeout: 60)
            XCTAssertEqual(run.status, 0, run.out + run.err)
            XCTAssertTrue((run.out + run.err).contains("Executed 1 test"), run.out + run.err)
            return
        }
        let prompter = SystemPrompter(environment: ["PATH": "/usr/bin:/bin"])
        let start = Date()
        do {
            try prompter.ensureAvailable()
            XCTFail("ensureAvailable should throw without a terminal and an askpass program")
        } catch let error as KeychainError {
            XCTAssertEqual(error.code, .interactionNotAllowed)
            XCTAssertEqual(error.message, "a password is needed but there is no terminal and no askpass program: "
                + "run from a terminal, set KEYGATE_ASKPASS, or pass --askpass PROG")
        }
        XCTAssertLessThan(Date().timeIntervalSince(start), 1.0)
        XCTAssertThrowsError(try prompter.readSecret(prompt: "x")) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed)
        }
    }

    // MARK: the PAM conversation's prompt text

    func test_promptText_replacesBarePasswordPrompt_andShowsReason() {
        let plain = PAMConversation(prompter: SystemPrompter(environment: [:]), user: "alice", reason: nil)
        XCTAssertEqual(plain.promptText(for: "Password: "), "[keygate] password for alice: ")
        XCTAssertEqual(plain.promptText(for: "Verification code: "), "[keygate] Verification code: ")
        let reasoned = PAMConversation(prompter: SystemPrompter(environment: [:]), user: "alice", reason: "Read the VPN key")
        XCTAssertEqual(reasoned.promptText(for: "Password: "), "[keygate] Read the VPN key\nPassword for alice: ")
    }

    // MARK: askpass, for real

    /// An askpass script that records its argv and environment in `folder` and prints
    /// the file `answer` (or exits with `status`).
    private func makeAskpass(answer: [UInt8], status: Int = 0) throws -> String {
        XCTAssertTrue(FileManager.default.createFile(atPath: folder + "/answer", contents: Data(answer)))
        let script = folder + "/askpass.sh"
        try """
        #!/bin/sh
        printf '%s' "$1" > "$KG_DIR/argv1"
        printf '%s\\n' "$0" "$@" > "$KG_DIR/argv"
        env > "$KG_DIR/env"
        cat "$KG_DIR/answer"
        exit \(status)

        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o700)
        return script
    }

    private var askpassEnvironment: [String: String] { ["KG_DIR": folder, "PATH": "/usr/bin:/bin"] }

    private func recorded(_ name: String) -> String {
        (try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "<missing>"
    }

    func test_askpass_returnsExactBytes_andGetsPromptAsArgv1() throws {
        let secret = "p ä ss wörd 🔑  end"
        let script = try makeAskpass(answer: Array((secret + "\n").utf8))
        let prompter = AskpassPrompter(program: script, environment: KeygateEnvironment(askpassEnvironment))
        let answer = try XCTUnwrap(prompter.readSecret(prompt: "[keygate] password for alice: "))
        XCTAssertEqual(answer.unprotectedCopy(), Array(secret.utf8))
        XCTAssertEqual(recorded("argv1"), "[keygate] password for alice: ")
    }

    func test_askpass_stripsExactlyOneTrailingNewline() throws {
        let prompter = AskpassPrompter(program: try makeAskpass(answer: Array("abc\n\n".utf8)), environment: KeygateEnvironment(askpassEnvironment))
        XCTAssertEqual(try prompter.readSecret(prompt: "p")?.unprotectedCopy(), Array("abc\n".utf8))
        let bare = AskpassPrompter(program: try makeAskpass(answer: Array("abc".utf8)), environment: KeygateEnvironment(askpassEnvironment))
        XCTAssertEqual(try bare.readSecret(prompt: "p")?.unprotectedCopy(), Array("abc".utf8))
    }

    func test_askpass_returnsNil_whenProgramExitsNonZero() throws {
        let prompter = AskpassPrompter(program: try makeAskpass(answer: Array("typed anyway\n".utf8), status: 1),
                                       environment: KeygateEnvironment(askpassEnvironment))
        XCTAssertNil(try prompter.readSecret(prompt: "p"))
        XCTAssertEqual(recorded("argv1"), "p")  // it did run
    }

    func test_askpass_secretNeverInChildArgvOrEnvironment() throws {
        let secret = "zebra-\(UUID().uuidString)"
        let prompter = AskpassPrompter(program: try makeAskpass(answer: Array(secret.utf8)), environment: KeygateEnvironment(askpassEnvironment))
        let answer = try XCTUnwrap(prompter.readSecret(prompt: "p"))
        XCTAssertEqual(answer.unprotectedCopy(), Array(secret.utf8))
        // A second run sees the answer of the first one in neither argv nor env.
        _ = try prompter.readSecret(prompt: "again")
        XCTAssertFalse(recorded("argv").contains("zebra-"), recorded("argv"))
        XCTAssertFalse(recorded("env").contains("zebra-"))
        XCTAssertTrue(recorded("env").contains("KG_DIR=\(folder)"))  // it is the environment we gave
    }

    func test_askpass_ensureAvailable_throws_whenProgramMissing() throws {
        let missing = AskpassPrompter(program: folder + "/no-such-askpass", environment: KeygateEnvironment(askpassEnvironment))
        XCTAssertThrowsError(try missing.ensureAvailable()) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed)
            XCTAssertTrue((error as? KeychainError)?.message.contains("no-such-askpass") ?? false)
        }
        XCTAssertNoThrow(try AskpassPrompter(program: "true", environment: KeygateEnvironment(askpassEnvironment)).ensureAvailable())
    }

    func test_systemPrompter_readsThroughKEYGATE_ASKPASS_whenForcedByEnvironment() throws {
        let script = try makeAskpass(answer: Array("from askpass\n".utf8))
        var env = askpassEnvironment
        env["KEYGATE_ASKPASS"] = script
        env["KEYGATE_ASKPASS_REQUIRE"] = "force"
        let prompter = SystemPrompter(environment: KeygateEnvironment(env))
        XCTAssertNoThrow(try prompter.ensureAvailable())
        XCTAssertEqual(try prompter.readSecret(prompt: "q")?.unprotectedCopy(), Array("from askpass".utf8))
    }

    // MARK: the terminal, through a real pseudo-terminal

    /// The pty driver: runs argv on a new pseudo-terminal as its controlling terminal,
    /// waits for the prompt with echo off, types (or sends Ctrl-D / Ctrl-C), then
    /// reports what it saw as JSON.
    private static let ptyDriver = #"""
    import json, os, select, sys, termios, fcntl, time
    mode, argv = sys.argv[1], sys.argv[2:]
    master, slave = os.openpty()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.close(master)
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    out = bytearray()
    def pump(timeout):
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            return False
        try:
            data = os.read(master, 65536)
        except OSError:
            return False
        out.extend(data)
        return len(data) > 0
    def echo_on():
        return bool(termios.tcgetattr(slave)[3] & termios.ECHO)
    echo_before = echo_on()
    deadline = time.time() + 30
    echo_off_seen = False
    while time.time() < deadline:
        pump(0.05)
        if b"Secret: " in out and not echo_on():
            echo_off_seen = True
            break
    if echo_off_seen:
        os.write(master, {"answer": b"hunter2 x\n", "eof": b"\x04", "interrupt": b"\x03"}[mode])
    status = None
    while time.time() < deadline:
        pump(0.05)
        wpid, st = os.waitpid(pid, os.WNOHANG)
        if wpid == pid:
            status = st
            break
    while pump(0.1):
        pass
    result = {"echo_before": echo_before, "echo_off_seen": echo_off_seen, "echo_after": echo_on(),
              "output": out.decode("utf-8", "replace"),
              "signal": os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else 0}
    if status is None:
        os.kill(pid, 9)
    print(json.dumps(result))
    """#

    private struct PTYReport: Decodable {
        let echo_before: Bool
        let echo_off_seen: Bool
        let echo_after: Bool
        let output: String
        let signal: Int32
    }

    private func runOnPTY(mode: String) throws -> (PTYReport, String) {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "/usr/bin/python3 for a pseudo-terminal")
        let driver = folder + "/pty_driver.py"
        try Self.ptyDriver.write(toFile: driver, atomically: true, encoding: .utf8)
        var env = ProcessInfo.processInfo.environment
        env["KEYGATE_TEST_PTY_RESULT"] = folder + "/pty_result"
        let run = try Subprocess.run(["/usr/bin/python3", driver, mode, CommandLine.arguments[0],
                                      "KeygateTests.PrompterTests/test_terminalPrompter_childOnPTY"],
                                     environment: env, timeout: 120)
        XCTAssertEqual(run.status, 0, run.err)
        let report = try JSONDecoder().decode(PTYReport.self, from: run.stdout)
        return (report, recorded("pty_result"))
    }

    /// The program on the terminal (only when the pty tests run it): reads a secret and
    /// records it with the echo state afterwards. Run directly, it checks that it is not.
    func test_terminalPrompter_childOnPTY() throws {
        guard let resultPath = ProcessInfo.processInfo.environment["KEYGATE_TEST_PTY_RESULT"] else {
            XCTAssertNil(ProcessInfo.processInfo.environment["KEYGATE_TEST_PTY_RESULT"])
            return
        }
        let secret = try TerminalPrompter().readSecret(prompt: "Secret: ")
        let fd = open("/dev/tty", O_RDWR | O_NOCTTY)
        var settings = termios()
        XCTAssertEqual(tcgetattr(fd, &settings), 0)
        close(fd)
        let echo = settings.c_lflag & tcflag_t(ECHO) != 0
        let text = secret.map { String(decoding: $0.unprotectedCopy(), as: UTF8.self) } ?? "<nil>"
        try "\(text)|echo=\(echo)".write(toFile: resultPath, atomically: true, encoding: .utf8)
    }

    func test_terminalPrompter_readsWithoutEcho_andRestoresEcho() throws {
        let (report, result) = try runOnPTY(mode: "answer")
        XCTAssertTrue(report.echo_before)
        XCTAssertTrue(report.echo_off_seen, report.output)
        XCTAssertTrue(report.output.contains("Secret: "))
        XCTAssertFalse(report.output.contains("hunter2"), "the typed password was echoed: \(report.output)")
        XCTAssertEqual(result, "hunter2 x|echo=true")
        XCTAssertTrue(report.echo_after)
    }

    func test_terminalPrompter_returnsNil_onCtrlD() throws {
        let (report, result) = try runOnPTY(mode: "eof")
        XCTAssertTrue(report.echo_off_seen, report.output)
        XCTAssertEqual(result, "<nil>|echo=true")
    }

    /// Ctrl-C at the prompt is the person's cancel (errSecUserCanceled, exit 128 in the CLI),
    /// not the death of the program, and the terminal has its echo back.
    func test_terminalPrompter_ctrlC_cancels_andRestoresEcho() throws {
        let (report, result) = try runOnPTY(mode: "interrupt")
        XCTAssertTrue(report.echo_off_seen, report.output)
        XCTAssertEqual(report.signal, 0, report.output)
        XCTAssertEqual(result, "<nil>|echo=true")
        XCTAssertTrue(report.echo_after, "the terminal was left without echo")
    }
}
