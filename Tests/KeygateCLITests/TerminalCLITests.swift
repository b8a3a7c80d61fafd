// Every verb that asks for a secret, typed by a person at an interactive shell on a
// real pseudo-terminal (TerminalShell), against the keygate binary people run: make
// check's release pass points KEYGATE_TERMINAL_BINARY at the binary `make install`
// put on PATH, and the debug pass runs the same tests on the debug build. Each test
// asserts the exact screen (prompt text, the newline after the hidden input, the
// output), the exit status, and that no typed secret ever appeared on the screen.
import Foundation
import KeygateTestSupport
import XCTest

final class TerminalCLITests: XCTestCase {
    private let secret = "s3cret vpn"

    // MARK: creating and adding

    func test_init_asksForThePassword_andShowsTheRecoveryKeyOnce() throws {
        let shell = try TerminalShell()
        try shell.start("keygate init")
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        let lines = screen.components(separatedBy: "\n")
        XCTAssertEqual(Array(lines.prefix(4)), [
            "[keygate] create your keychain",
            "Password for \(shell.user.name): ",
            "Keychain created. Your recovery key is shown only this once; keep it somewhere safe.",
            "It unlocks the keychain if your password is lost: keygate unlock --recovery",
        ], screen)
        XCTAssertEqual(lines.count, 8, screen)  // the key, the store and why, who answers the Secret Service, then the end of its line
        XCTAssertTrue(Self.isRecoveryKey(lines.count > 4 ? lines[4] : ""), screen)
        XCTAssertTrue(lines.count > 5 && lines[5].hasPrefix("Items are kept in the "), screen)
        XCTAssertTrue(lines.count > 6 && lines[6].hasPrefix("Secret Service: "), screen)
        assertNothingSecretShown(shell)
    }

    func test_add_secretTypedTwice_isStored_andReadBack() throws {
        let (shell, _) = try initializedShell()
        try shell.start("keygate add -s vpn -a alice")
        try shell.answer("Secret for vpn/alice: ", with: secret)
        try shell.answer("Retype the secret: ", with: secret)
        let added = try shell.finish()
        XCTAssertEqual(added.status, 0, added.screen)
        XCTAssertEqual(added.screen, "Secret for vpn/alice: \nRetype the secret: \n" + (try TerminalShell.addedWithTheDefault("vpn/alice")))

        try shell.start("keygate get -s vpn -a alice")
        let read = try shell.finish(answering: [passwordPrompt(shell): shell.user.password])
        XCTAssertEqual(read.status, 0, read.screen)
        XCTAssertTrue(read.screen.hasSuffix(": \n\(secret)\n"), read.screen)
        assertNothingSecretShown(shell)  // the secret itself is printed by get, on purpose
    }

    func test_add_accessNone_saysWhatTheItemGot_andGetDoesNotAsk() throws {
        let (shell, _) = try initializedShell()
        try shell.start("keygate add -s cron -a job --access none")
        try shell.answer("Secret for cron/job: ", with: secret)
        try shell.answer("Retype the secret: ", with: secret)
        let added = try shell.finish()
        XCTAssertEqual(added.status, 0, added.screen)
        XCTAssertEqual(added.screen, """
            Secret for cron/job: 
            Retype the secret: 
            keygate: stored cron/job with access none: as given; it is read without a password while the keychain is unlocked

            """)
        let read = try shell.run("keygate get -s cron -a job")
        XCTAssertEqual(read.status, 0, read.screen)
        XCTAssertEqual(read.screen, "\(secret)\n", "no password asked while the keychain is unlocked")
    }

    func test_addGenericPassword_dashWValue_storesIt_withTheWarning_andNoPrompt() throws {
        let (shell, _) = try initializedShell()
        let added = try shell.run("keygate add-generic-password -s web -a alice -w 'w-value-1' --access none")
        XCTAssertEqual(added.status, 0, added.screen)
        XCTAssertEqual(added.screen, """
            keygate: warning: the secret was given on the command line: other users of this host can read it in /proc/PID/cmdline \
            while keygate runs, and your shell may keep it in its history; pipe it on standard input (printf %s "$SECRET" | \
            keygate add …) or put -w last to be prompted
            keygate: stored web/alice with access none: as given; it is read without a password while the keychain is unlocked

            """)
        let read = try shell.run("keygate find-generic-password -s web -a alice -w")
        XCTAssertEqual(read.screen, "w-value-1\n")
    }

    func test_gitCredentialGet_namesWhatItUnlocks_beforeThePasswordPrompt() throws {
        // Right after git's "Cloning into …", a bare "Password for USER:" reads as the remote's, so the prompt
        // says what it unlocks first.
        let (shell, _) = try initializedShell()
        let stored = try shell.run(
            "printf 'protocol=https\\nhost=git.example.test\\nusername=alice\\npassword=g1t-pw\\n\\n' | keygate git-credential store")
        XCTAssertEqual(stored.status, 0, stored.screen)
        XCTAssertEqual(try shell.run("keygate lock").status, 0)
        try shell.start("printf 'protocol=https\\nhost=git.example.test\\n\\n' | keygate git-credential get")
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, """
            [keygate] git asks your keychain for its credential for git.example.test: type your login password to unlock it, not \
            the password of git.example.test
            Password for \(shell.user.name): 
            username=alice
            password=g1t-pw

            """)
        assertNothingSecretShown(shell)
    }

    func test_add_whenTheTwoEntriesDiffer_saysSo_andAsksAgain() throws {
        let (shell, _) = try initializedShell()
        try shell.start("keygate add -s vpn -a alice")
        try shell.answer("Secret for vpn/alice: ", with: secret)
        try shell.answer("Retype the secret: ", with: "something else")
        try shell.answer("Secret for vpn/alice: ", with: secret)
        try shell.answer("Retype the secret: ", with: secret)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, """
            Secret for vpn/alice: 
            Retype the secret: 
            The two entries differ; try again.
            Secret for vpn/alice: 
            Retype the secret: 

            """ + (try TerminalShell.addedWithTheDefault("vpn/alice")))
        assertNothingSecretShown(shell, also: [secret, "something else"])
    }

    func test_addGenericPassword_dashW_promptsTwice_asOnMacOS() throws {
        let (shell, _) = try initializedShell()
        try shell.start("keygate add-generic-password -s vpn -a alice -w")
        try shell.answer("Secret for vpn/alice: ", with: secret)
        try shell.answer("Retype the secret: ", with: secret)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, "Secret for vpn/alice: \nRetype the secret: \n" + (try TerminalShell.addedWithTheDefault("vpn/alice")))
        assertNothingSecretShown(shell, also: [secret])
    }

    // MARK: reading

    func test_get_whenLocked_asksForThePassword_thenPrintsTheSecret() throws {
        let shell = try lockedShell()
        try assertAsksThenPrints(shell, "keygate get -s vpn -a alice", "vpn", secret)
    }

    func test_get_ofAGatedItem_asksAgainAfterLock_andNotWithinTheWindow() throws {
        let (shell, _) = try initializedShell()
        let added = try shell.run("printf %s 'b4nk' | keygate add -s bank -a alice --access user-presence")
        XCTAssertEqual(added.status, 0, added.screen)
        XCTAssertEqual(try shell.run("keygate lock").status, 0)
        try assertAsksThenPrints(shell, "keygate get -s bank -a alice", "bank", "b4nk")

        let again = try shell.run("keygate get -s bank -a alice")  // same terminal, inside the reuse window
        XCTAssertEqual(again.status, 0, again.screen)
        XCTAssertEqual(again.screen, "b4nk\n")
        assertNothingSecretShown(shell)
    }

    func test_findGenericPassword_dashW_whenLocked_asksThenPrints_asOnMacOS() throws {
        let shell = try lockedShell()
        try assertAsksThenPrints(shell, "keygate find-generic-password -s vpn -a alice -w", "vpn", secret)
    }

    func test_threeWrongPasswords_sayWhy_andExit51() throws {
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice")
        for _ in 0..<3 { try shell.answer(passwordPrompt(shell), with: "not-the-password") }
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 51, screen)
        let ask = useItemReason("vpn") + "Password for \(shell.user.name): \n"
        XCTAssertEqual(screen, ask + "Sorry, try again.\n" + ask + "Sorry, try again.\n" + ask
                       + "keygate: 3 incorrect password attempts for \(shell.user.name)\n")
        assertNothingSecretShown(shell, also: ["not-the-password"])
    }

    func test_lockout_refusesWithoutPrompting_andDiscardsWhatWasTypedAhead() throws {
        // A lockout refuses at once, so a password typed ahead would reach the shell.
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice")
        let first = try shell.finish(answering: [passwordPrompt(shell): "not-the-password"])
        XCTAssertEqual(first.status, 51, first.screen)
        try shell.start("keygate get -s vpn -a alice")
        let second = try shell.finish(answering: [passwordPrompt(shell): "not-the-password"])
        XCTAssertEqual(second.status, 51, second.screen)
        XCTAssertTrue(second.screen.contains("too many failed attempts"), "five failures start the lockout: \(second.screen)")
        // The command and, in the same keystrokes, a password typed ahead for the prompt that will not come.
        let line = "keygate get -s vpn -a alice; echo \"[rc=$?]\""
        shell.terminal.type(line + "\r" + "typed-ahead-pw\r")
        _ = try shell.terminal.expect(line + "\n")
        let screen = try shell.terminal.expect("[rc=", timeout: 60)
        XCTAssertEqual(try shell.terminal.expect("]"), "51]", screen)
        _ = try shell.terminal.expect("$ ")
        XCTAssertTrue(screen.contains("""
            keygate: too many failed attempts: gated items are locked for
            """), screen)
        XCTAssertTrue(screen.contains("keygate: discarded what was typed ahead (15 bytes), so that it does not reach your shell\n"),
                      screen)
        XCTAssertEqual(try shell.run("echo still-here").screen, "still-here\n", "the shell read nothing typed ahead")
        XCTAssertFalse(shell.terminal.screen.contains("typed-ahead-pw"), "never echoed, never run:\n\(shell.terminal.screen)")
    }

    func test_validate_releaseStyle_asksOnce_thenTheScriptsReadsDoNot() throws {
        // `keygate -v` before a release script, as `sudo -v` before a build that uses sudo.
        let (shell, _) = try initializedShell()
        for (service, value) in [("signing", "sign-key"), ("upload", "upload-token")] {
            XCTAssertEqual(try shell.run("printf %s '\(value)' | keygate add -s \(service) -a release 2>/dev/null").status, 0)
        }
        XCTAssertEqual(try shell.run("keygate lock").status, 0)
        try shell.start("keygate -v")
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let validated = try shell.finish()
        XCTAssertEqual(validated.status, 0, validated.screen)
        XCTAssertEqual(validated.screen, """
            [keygate] validate: let items that need your password read without asking
            Password for \(shell.user.name): 
            keygate: items that need your password read without asking in this terminal for 300 s; `keygate lock` ends it

            """)
        // The release script: two gated reads, no prompt.
        let script = try shell.run("sh -c 'keygate get -s signing -a release; keygate get -s upload -a release'")
        XCTAssertEqual(script.status, 0, script.screen)
        XCTAssertEqual(script.screen, "sign-key\nupload-token\n")
        // Inside the window, validate asks nothing and starts the window again.
        let again = try shell.run("keygate validate")
        XCTAssertEqual(again.status, 0, again.screen)
        XCTAssertEqual(again.screen, """
            keygate: items that need your password read without asking in this terminal for 300 s; `keygate lock` ends it

            """)
        assertNothingSecretShown(shell)
    }

    // MARK: unlocking and re-wrapping

    func test_unlock_asksForThePassword() throws {
        let (shell, _) = try initializedShell(withItem: true)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        try shell.start("keygate unlock")
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, "[keygate] unlock the keychain\nPassword for \(shell.user.name): \n")
        XCTAssertEqual(try shell.run("keygate status --json").status, 0)
        assertNothingSecretShown(shell)
    }

    func test_unlockRecovery_asksForTheRecoveryKey() throws {
        let (shell, recoveryKey) = try initializedShell(withItem: true)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        try shell.start("keygate unlock --recovery")
        try shell.answer("Recovery key: ", with: recoveryKey)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, "Recovery key: \n")
        XCTAssertEqual(shell.terminal.screen.components(separatedBy: recoveryKey).count, 2,
                       "the recovery key shows once, at init, and is not echoed when typed")
        assertNothingSecretShown(shell)
    }

    func test_passwd_afterAPasswordChange_asksForTheNewThenThePrevious() throws {
        let (shell, _) = try initializedShell(withItem: true)
        let previous = shell.user.password
        let newPassword = "Changed-" + String(previous.prefix(12))
        try shell.user.changePassword(to: newPassword)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        try shell.start("keygate passwd")
        try shell.answer(passwordPrompt(shell), with: newPassword)
        try shell.answer("(your previous password): ", with: previous)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, """
            [keygate] re-wrap your keychain for your current password
            Password for \(shell.user.name): 
            [keygate] the password Keygate last knew for \(shell.user.name) (your previous password): 
            The keychain now opens with your current password. Items with current-set access were invalidated.

            """)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        try shell.start("keygate get -s vpn -a alice")
        let read = try shell.finish(answering: [passwordPrompt(shell): newPassword])
        XCTAssertEqual(read.status, 0, read.screen)
        XCTAssertTrue(read.screen.hasSuffix(": \n\(secret)\n"), read.screen)
        assertNothingSecretShown(shell, also: [previous, newPassword])
    }

    func test_passwdRecovery_asksForTheRecoveryKeyThenTheNewPassword() throws {
        let (shell, recoveryKey) = try initializedShell(withItem: true)
        let newPassword = "Reset-" + String(shell.user.password.prefix(12))
        try shell.user.changePassword(to: newPassword)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        // The item needs user presence (the shipped policy): that is the gatekeeper's, so nothing is
        // lost, and nothing is asked before the recovery key.
        try shell.start("keygate passwd --recovery")
        try shell.answer("Recovery key: ", with: recoveryKey)
        try shell.answer(passwordPrompt(shell), with: newPassword)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.hasPrefix("""
            Recovery key: 
            [keygate] re-wrap your keychain for your current password
            Password for \(shell.user.name): 
            The new password now opens the keychain; items with user presence keep working
            """), screen)
        XCTAssertEqual(try shell.run("keygate lock --all").status, 0)
        try shell.start("keygate unlock")
        let unlocked = try shell.finish(answering: [passwordPrompt(shell): newPassword])
        XCTAssertEqual(unlocked.status, 0, unlocked.screen)
        try shell.start("keygate get -s vpn -a alice")
        let read = try shell.finish(answering: [passwordPrompt(shell): newPassword])
        XCTAssertEqual(read.status, 0, read.screen)
        XCTAssertTrue(read.screen.contains(secret), "the presence item survived the reset: \(read.screen)")
        XCTAssertEqual(shell.terminal.screen.components(separatedBy: recoveryKey).count, 2,
                       "the recovery key shows once, at init, and is not echoed when typed")
        assertNothingSecretShown(shell, also: [newPassword])
    }

    func test_deleteAll_saysHowManyAndAsks_asAptDoes() throws {
        let (shell, _) = try initializedShell(withItem: true)
        XCTAssertEqual(try shell.run("printf %s two | keygate add -s vpn -a bob").status, 0)
        let question = "This deletes 2 items for good (their secrets cannot be recovered). Continue? [y/N] "
        try shell.start("keygate delete -s vpn --all")
        try shell.reply(question, with: "")
        let kept = try shell.finish()
        XCTAssertEqual(kept.status, 128, kept.screen)
        XCTAssertEqual(kept.screen, question + "\nkeygate: canceled: nothing was changed\n")
        XCTAssertEqual(try shell.run("keygate exists -s vpn -a bob").status, 0, "Enter alone is no")
        try shell.start("keygate delete -s vpn --all")
        try shell.reply(question, with: "y")
        let gone = try shell.finish()
        XCTAssertEqual(gone.status, 0, gone.screen)
        XCTAssertEqual(gone.screen, question + "y\ndeleted 2 items\n")
    }

    // MARK: keys a person presses at a prompt

    func test_ctrlC_atThePrompt_cancelsWith128_andLeavesEchoOn() throws {
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice")
        try shell.pressAtPrompt(passwordPrompt(shell), PseudoTerminal.interrupt)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 128, screen)
        XCTAssertEqual(screen, useItemReason("vpn") + """
            Password for \(shell.user.name): 
            keygate: authentication for \(shell.user.name) was canceled: nothing was unlocked

            """)
        try assertSaneTerminal(shell)
    }

    func test_ctrlD_onAnEmptyPrompt_cancelsWith128() throws {
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice")
        try shell.pressAtPrompt(passwordPrompt(shell), PseudoTerminal.endOfFile)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 128, screen)
        XCTAssertTrue(screen.hasSuffix("was canceled: nothing was unlocked\n"), screen)
        try assertSaneTerminal(shell)
    }

    func test_ctrlZ_thenFg_atThePrompt_asksAgain_andLeavesTheTerminalSane() throws {
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice", statusMarker: false)
        try shell.pressAtPrompt(passwordPrompt(shell), PseudoTerminal.suspend)
        try shell.expect("Stopped")
        try shell.expect("$ ")
        try assertSaneTerminal(shell)  // the shell got the terminal back with echo on

        try shell.start("fg; echo \"[rc=$?]\"", statusMarker: false)
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertEqual(screen, "keygate get -s vpn -a alice\n" + useItemReason("vpn") + "Password for \(shell.user.name): \n\(secret)\n")
        try assertSaneTerminal(shell)
        assertNothingSecretShown(shell)
    }

    func test_bg_atThePrompt_stopsTheJobUntilFg_thenAsksAgain() throws {
        let shell = try lockedShell()
        try shell.start("keygate get -s vpn -a alice", statusMarker: false)
        try shell.pressAtPrompt(passwordPrompt(shell), PseudoTerminal.suspend)
        try shell.expect("Stopped")
        try shell.expect("$ ")
        // In the background it may print its prompt, but it stops before it touches the terminal's settings.
        try shell.start("bg", statusMarker: false)
        // Printed from the background (before or after the shell's next "$ "); then it stops.
        try shell.expect(passwordPrompt(shell))
        var jobs = ""
        for _ in 0..<100 where !jobs.contains("Stopped") {  // bash reports a job's stop at its next command
            usleep(50_000)
            jobs = try shell.run("jobs").screen
        }
        XCTAssertTrue(jobs.contains("Stopped"), "the background job did not stop before touching the terminal: \(jobs)")
        try assertSaneTerminal(shell)

        try shell.start("fg; echo \"[rc=$?]\"", statusMarker: false)
        let (screen, status) = try shell.finish(answering: [passwordPrompt(shell): shell.user.password])
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.hasSuffix("Password for \(shell.user.name): \n\(secret)\n"), screen)
        try assertSaneTerminal(shell)
        assertNothingSecretShown(shell)
    }

    // MARK: helpers

    // MARK: ssh-add

    func test_sshAdd_asksForTheKeysPassphrase_refusesOneThatDoesNotOpenIt_andStoresTheRightOne() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/ssh-keygen"), "ssh-keygen (apt-get install openssh-client)")
        let (shell, _) = try initializedShell()
        let keyPassphrase = "key phrase 42"
        let made = try shell.run("cd && ssh-keygen -q -t ed25519 -C terminal-test -f key -N '\(keyPassphrase)'")
        XCTAssertEqual(made.status, 0, made.screen)
        try shell.start("keygate ssh-add key")
        try shell.answer("Passphrase for key: ", with: "not it")
        try shell.answer("Passphrase for key: ", with: keyPassphrase)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.hasPrefix("Passphrase for key: \nThat passphrase does not open key; try again.\nPassphrase for key: \n"), screen)
        XCTAssertTrue(screen.contains("stored the passphrase of key (SHA256:"), screen)
        XCTAssertFalse(screen.contains("not it"), screen)

        let listed = try shell.run("keygate list -s ssh --json")
        XCTAssertTrue(listed.screen.contains("\"access\":\"user-presence\""), listed.screen)
        assertNothingSecretShown(shell)
    }

    private func passwordPrompt(_ shell: TerminalShell) -> String { "Password for \(shell.user.name): " }

    /// The reason a read of a gated item shows (every item, under the shipped policy): what is
    /// asked, naming the item, in a Mac's words; "unlock the keychain" is for real unlocks.
    private func useItemReason(_ service: String) -> String {
        "[keygate] keygate wants to use your confidential information stored in \"\(service)\" in your keychain.\n"
    }

    /// Runs `command` on a locked keychain, types the password at its one prompt, and checks the
    /// whole screen: the reason naming `service`, the newline after the hidden input, then `printed`.
    private func assertAsksThenPrints(_ shell: TerminalShell, _ command: String, _ service: String, _ printed: String,
                                      file: StaticString = #filePath, line: UInt = #line) throws {
        try shell.start(command)
        try shell.answer(passwordPrompt(shell), with: shell.user.password)
        let (screen, status) = try shell.finish()
        XCTAssertEqual(status, 0, screen, file: file, line: line)
        XCTAssertEqual(screen, useItemReason(service) + "Password for \(shell.user.name): \n\(printed)\n",
                       file: file, line: line)
        assertNothingSecretShown(shell, file: file, line: line)
    }

    /// A shell whose user has a keychain (made at the terminal), optionally with vpn/alice holding
    /// `secret`. Returns the recovery key shown at init.
    private func initializedShell(withItem: Bool = false) throws -> (TerminalShell, String) {
        let shell = try TerminalShell()
        try shell.start("keygate init")
        let made = try shell.finish(answering: [passwordPrompt(shell): shell.user.password])
        XCTAssertEqual(made.status, 0, made.screen)
        let key = made.screen.components(separatedBy: "\n").first(where: Self.isRecoveryKey) ?? ""
        XCTAssertFalse(key.isEmpty, made.screen)
        if withItem {
            let added = try shell.run("printf %s '\(secret)' | keygate add -s vpn -a alice")
            XCTAssertEqual(added.status, 0, added.screen)
        }
        return (shell, key)
    }

    /// A shell whose keychain holds vpn/alice and is locked (`keygate lock`).
    private func lockedShell() throws -> TerminalShell {
        let (shell, _) = try initializedShell(withItem: true)
        XCTAssertEqual(try shell.run("keygate lock").status, 0)
        return shell
    }

    private static func isRecoveryKey(_ line: String) -> Bool {
        line.range(of: #"^([0-9A-Z]{4}-){13}[0-9A-Z]{4}$"#, options: .regularExpression) != nil
    }

    /// `stty -a` from the shell, on the same terminal: echo and canonical input are on.
    private func assertSaneTerminal(_ shell: TerminalShell, file: StaticString = #filePath, line: UInt = #line) throws {
        let settings = try shell.sttySettings()
        let flags = Set(settings.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == ";" }).map(String.init))
        for flag in ["echo", "icanon", "isig", "icrnl"] {
            XCTAssertTrue(flags.contains(flag), "stty -a lacks \(flag):\n\(settings)", file: file, line: line)
        }
    }

    /// No typed password (and none of `also`) ever appeared on the terminal.
    private func assertNothingSecretShown(_ shell: TerminalShell, also: [String] = [],
                                          file: StaticString = #filePath, line: UInt = #line) {
        let screen = shell.terminal.screen
        for typed in [shell.user.password] + also where !typed.isEmpty {
            XCTAssertFalse(screen.contains(typed), "'\(typed)' was echoed:\n\(screen)", file: file, line: line)
        }
    }
}
