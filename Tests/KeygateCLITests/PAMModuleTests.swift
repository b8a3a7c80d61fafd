// pam_keygate.so as the system loads it: the built module (make pam), real libpam
// through a C driver (Tests/PAMDriver, so the module's Swift runtime is the only one
// in the process), real pam_unix, a real user whose keychain the real CLI created,
// and the user's real kernel keyring. The driver runs as root, like login or sshd.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class PAMModuleTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    static var modulePath: String {
        ProcessInfo.processInfo.environment["KEYGATE_PAM_MODULE"].flatMap { $0.isEmpty ? nil : $0 }
            ?? PackagePaths.root + "/.build/pam/pam_keygate.so"
    }

    /// The keygate-pam-helper the module starts: the release build `make pam` makes (what is
    /// installed: no test hooks), else the debug one; KEYGATE_PAM_HELPER overrides both.
    static var helperPath: String {
        if let forced = ProcessInfo.processInfo.environment["KEYGATE_PAM_HELPER"], !forced.isEmpty { return forced }
        let release = PackagePaths.root + "/.build/release/keygate-pam-helper"
        return FileManager.default.isExecutableFile(atPath: release) ? release : PackagePaths.buildProducts + "/keygate-pam-helper"
    }

    /// The module as a PAM line names it: its path and the helper it starts.
    static var module: String { "\(modulePath) helper=\(helperPath)" }

    func test_module_exportsOnlyPamSmFunctions_andNeedsNothingFromTheToolchain() throws {
        try requireModule()
        let nm = try Subprocess.run(["nm", "-D", "--defined-only", "--extern-only", Self.modulePath])
        XCTAssertEqual(nm.status, 0, nm.err)
        let names = nm.out.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) }
        XCTAssertEqual(Set(names), ["pam_sm_authenticate", "pam_sm_setcred", "pam_sm_open_session",
                                    "pam_sm_close_session", "pam_sm_chauthtok"])
        let ldd = try Subprocess.run(["ldd", Self.modulePath])
        XCTAssertEqual(ldd.status, 0, ldd.err)
        XCTAssertFalse(ldd.out.contains("/opt/swift") || ldd.out.contains("swift"), ldd.out)
        XCTAssertFalse(ldd.out.contains("not found"), ldd.out)
        XCTAssertFalse(ldd.out.contains("libsecret") || ldd.out.contains("glib"), ldd.out)
        // The thin module, loaded into every login: libpam and libc only, at most 1 MB.
        let needed = try Subprocess.run(["readelf", "-d", Self.modulePath])
        let libraries = needed.out.split(separator: "\n").filter { $0.contains("(NEEDED)") }
            .compactMap { $0.split(separator: "[").last?.split(separator: "]").first.map(String.init) }
        XCTAssertEqual(Set(libraries), ["libpam.so.0", "libc.so.6"], needed.out)
        let size = try XCTUnwrap((try FileManager.default.attributesOfItem(atPath: Self.modulePath)[.size] as? NSNumber)?.intValue)
        XCTAssertLessThanOrEqual(size, 1_000_000, "pam_keygate.so is \(size) bytes")
    }

    /// The password reaches the helper on its standard input only: its argv is its path
    /// alone and its environment is empty (a stand-in helper records all three).
    func test_thePasswordReachesTheHelperOnAPipe_neverArgvOrEnvironment() throws {
        try requireModule()
        let h = try CLIUserHarness()
        let folder = NSTemporaryDirectory() + "kg-fake-helper-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        let fake = folder + "/helper"
        try """
        #!/bin/sh
        printf '%s\\n' "$0" "$@" > \(folder)/argv
        env > \(folder)/env
        cat > \(folder)/stdin
        echo "log 5 fake helper ran"
        """.write(toFile: fake, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(fake, 0o755), 0)
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(Self.modulePath) helper=\(fake) debug
        """)
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth"], password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        session.finish()
        let argv = try String(contentsOfFile: folder + "/argv", encoding: .utf8)
        let env = try String(contentsOfFile: folder + "/env", encoding: .utf8)
        let stdin = try String(contentsOfFile: folder + "/stdin", encoding: .utf8)
        XCTAssertEqual(argv, fake + "\n", "argv is the helper's path alone")
        XCTAssertFalse(env.contains(h.user.password) || argv.contains(h.user.password))
        XCTAssertFalse(env.split(separator: "\n").contains { !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && !$0.hasPrefix("_=") },
                       "an empty environment (what sh adds aside): \(env)")
        XCTAssertTrue(stdin.hasPrefix("keygate-pam 1\nphase auth\n"), stdin)
        XCTAssertTrue(stdin.contains("user \(h.user.name)\n"), stdin)
        XCTAssertTrue(stdin.contains("authtok \(h.user.password.utf8.count)\n\(h.user.password)end\n"), "the password on the pipe")
        XCTAssertTrue(log.lines().contains { $0.contains("pam_keygate(login-test:auth): fake helper ran") }, "its lines reach syslog")
    }

    /// Every line the helper prints for the module is one line: a carriage return or line feed in
    /// a message's text becomes a space (HelperOutput.oneLine), so no text it logs can start a
    /// line of its own (a forged "unlocked UID" mark, a "log 0" line). The built helper, run as
    /// the module runs it (an empty environment, the request on standard input).
    func test_theHelpersLinesAreOneLineEach_soNoMessageForgesALine() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: Self.helperPath), "the built keygate-pam-helper (make pam)")
        let request = "keygate-pam 1\nphase x\runlocked 0\r\rlog 0 forged\nend\n"
        let run = try Subprocess.run(["-i", Self.helperPath], stdin: Data(request.utf8))
        XCTAssertEqual(run.status, 25, "PAM_IGNORE: \(run.err)")
        let lines = run.out.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "one line and the final newline: \(run.out.debugDescription)")
        XCTAssertTrue(lines[0].hasPrefix("log 3 unknown phase 'x unlocked 0  log 0 forged'"), run.out.debugDescription)
        XCTAssertFalse(run.out.contains("\r"), run.out.debugDescription)
    }

    /// A PAM application that is not root (a screen locker, `su` run by the user) cannot keep
    /// root's session count: the module leaves /run/keygate alone and hands the open and the
    /// close to the helper's "open" and "close" phases, which count and log as they always did.
    func test_notRoot_theModuleHandsTheCountToTheHelper() throws {
        try requireModule()
        let h = try CLIUserHarness()
        let folder = NSTemporaryDirectory() + "kg-not-root-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        XCTAssertEqual(chmod(folder, 0o777), 0, "the user's helper writes its record here")
        let fake = folder + "/helper"
        try """
        #!/bin/sh
        { id -u; grep -a '^phase ' -; } >> \(folder)/phases
        echo "log 5 fake helper ran"
        """.write(toFile: fake, atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(fake, 0o755), 0)
        let sessions = "/run/keygate/\(h.user.uid).sessions"
        try? FileManager.default.removeItem(atPath: sessions)
        let stack = try Stack(confdir: folder, """
        session required pam_permit.so
        session optional \(Self.modulePath) helper=\(fake) debug
        """)
        XCTAssertEqual(chmod(folder + "/" + stack.service, 0o644), 0)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["open", "close"], password: "", asUser: true)
        XCTAssertEqual(try session.result(of: "open"), 0)
        XCTAssertEqual(try session.result(of: "close"), 0)
        session.finish()
        let phases = (try? String(contentsOfFile: folder + "/phases", encoding: .utf8)) ?? ""
        XCTAssertEqual(phases, "\(h.user.uid)\nphase open\n\(h.user.uid)\nphase close\n",
                       "both calls went to the helper, run as the user: \(phases)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: sessions), "root's count was not touched")
    }

    /// A helper that never answers is stopped at the module's budget; a missing one is
    /// reported. Either way the login goes on.
    func test_aHungOrMissingHelper_isStopped_andTheLoginGoesOn() throws {
        try requireModule()
        let h = try CLIUserHarness()
        let folder = NSTemporaryDirectory() + "kg-hung-helper-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        try "#!/bin/sh\nexec sleep 60\n".write(toFile: folder + "/hung", atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(folder + "/hung", 0o755), 0)
        for (helper, expected) in [(folder + "/hung", "did not finish within 10 s"), (folder + "/missing", "cannot run keygate-pam-helper")] {
            let stack = try Stack(h, """
            auth required pam_unix.so
            auth optional \(Self.modulePath) helper=\(helper)
            """)
            let log = try SyslogCapture()
            let start = Date()
            let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth"], password: h.user.password, log: log)
            XCTAssertEqual(try session.result(of: "auth"), 0, "the login goes on")
            XCTAssertLessThan(Date().timeIntervalSince(start), 20)
            session.finish()
            XCTAssertTrue(log.lines().contains { $0.contains(expected) }, "\(expected): \(log.lines())")
        }
    }

    func test_login_unlocks_getDoesNotPrompt_andLastLogoutLocks() throws {
        let (h, stack) = try userWithKeychain()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let prompts = try h.promptCount()
        let open = try h.run("keygate status; keygate get -s svc -a a", askpass: false)
        XCTAssertTrue(open.out.contains("state: unlocked"), open.summary)
        XCTAssertTrue(open.out.contains("s1"), open.summary)
        XCTAssertEqual(try h.promptCount(), prompts, "a read after login must not prompt")

        try session.proceedToClose()
        try h.assertKeychain(.locked)
    }

    /// Keygate's own Secret Service follows the login: its default collection is the keychain,
    /// locked until pam_keygate's login caches the master key, open while the session lasts, and
    /// locked again by the last logout, with nothing else to do (no unlock call to the daemon).
    func test_login_opensKeygatesSecretServiceCollection_andLogoutClosesIt() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service")
        let (h, stack) = try userWithKeychain()
        // The daemon on a bus of its own, running across the login (its bus address in a file),
        // started the way UserSession starts a script, but left running.
        let tools = try UserSession.stageTools()
        let daemon = Process()
        daemon.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
        daemon.arguments = ["-u", h.user.name, "--", "env", "-i", "HOME=\(h.user.home)", "USER=\(h.user.name)",
                            "PATH=\(tools):/usr/bin:/bin", "sh", "-c",
                            "exec keyctl session - setsid keygate-secret-session sh -c 'echo $$ > \"$HOME/kgss-pid\"; "
                                + "echo \"$DBUS_SESSION_BUS_ADDRESS\" > \"$HOME/kgss-bus\"; exec sleep 600'"]
        daemon.standardInput = FileHandle.nullDevice
        daemon.standardOutput = FileHandle.nullDevice
        daemon.standardError = FileHandle.nullDevice
        try daemon.run()
        // The session ends with its command: the sleep, by the pid it wrote.
        defer { _ = try? h.run("kill $(cat \"$HOME/kgss-pid\")", askpass: false); daemon.waitUntilExit() }
        let ready = try h.run("for i in $(seq 100); do [ -s \"$HOME/kgss-bus\" ] && break; sleep 0.1; done; echo bus=$(cat \"$HOME/kgss-bus\")",
                              askpass: false)
        XCTAssertNotEqual(ready.values["bus"] ?? "", "", ready.summary)
        let query = """
            export DBUS_SESSION_BUS_ADDRESS=$(cat "$HOME/kgss-bus")
            echo locked=$(dbus-send --print-reply=literal --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login \
                org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked | awk '{print $NF}')
            """
        XCTAssertEqual(try h.run(query, askpass: false).values["locked"], "true", "locked before the login")
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let prompts = try h.promptCount()
        let open = try h.run(query + """

            printf %s login-secret | secret-tool store --label=l app kg-login; echo store=$?
            echo lookup=$(secret-tool lookup app kg-login)
            """, askpass: false)
        XCTAssertEqual(open.values["locked"], "false", "the login opened the collection: \(open.summary)")
        XCTAssertEqual(open.values["store"], "0", open.summary)
        XCTAssertEqual(open.values["lookup"], "login-secret", open.summary)
        XCTAssertEqual(try h.promptCount(), prompts, "nothing asked for a password after the login")
        try session.proceedToClose()
        // No secret comes out at once; `Locked` may say "false" for up to 100 ms more, the
        // daemon's cached look at the keyring (docs/SECRET_SERVICE.md, "Limits"), then says "true".
        let closed = try h.run("""
            export DBUS_SESSION_BUS_ADDRESS=$(cat "$HOME/kgss-bus")
            echo lookup=[$(secret-tool lookup app kg-login)]
            start=$(date +%s%N)
            for i in $(seq 40); do
                locked=$(dbus-send --print-reply=literal --dest=org.freedesktop.secrets /org/freedesktop/secrets/collection/login \
                    org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection string:Locked | awk '{print $NF}')
                [ "$locked" = true ] && break
                sleep 0.05
            done
            echo locked=$locked
            echo millis=$(( ($(date +%s%N) - start) / 1000000 ))
            """, askpass: false)
        XCTAssertEqual(closed.values["lookup"], "[]", "the logout closed it: no secret comes out: \(closed.summary)")
        XCTAssertEqual(closed.values["locked"], "true", "and the collection says it is locked: \(closed.summary)")
        XCTAssertLessThan(Int(closed.values["millis"] ?? "") ?? .max, 1000, "within the daemon's 100 ms look: \(closed.summary)")
    }

    func test_overlappingSessions_keepTheKeyUntilTheLastCloses() throws {
        let (h, stack) = try userWithKeychain()
        let first = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try first.result(of: "open"), 0)
        let second = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try second.result(of: "open"), 0)

        try first.proceedToClose()
        try h.assertKeychain(.unlocked)

        try second.proceedToClose()
        try h.assertKeychain(.locked)
    }

    func test_wrongPassword_moduleIgnores_andTheKeychainStaysLocked() throws {
        let (h, _) = try userWithKeychain()
        // The stack's result is 0 only if pam_keygate.so answered PAM_IGNORE in both
        // phases: success is turned into a failure and any other code ends the stack.
        let stack = try Stack(h, """
        auth optional pam_unix.so
        auth [ignore=ignore success=bad default=die] \(Self.module) debug
        auth required pam_permit.so
        session [ignore=ignore success=bad default=die] \(Self.module) debug
        session required pam_permit.so
        """)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: "not-" + h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        try h.assertKeychain(.locked)
    }

    func test_passwordChange_rewrapsTheLoginProtector_soTheNewPasswordUnlocks() throws {
        let (h, stack) = try userWithKeychain()
        let newPassword = "N3w-" + UUID().uuidString
        // As `passwd` run by the user: real uid the user's, effective uid root.
        let change = try PAMDriver(stack: stack, user: h.user, steps: ["passwd"], password: h.user.password,
                                   newPassword: newPassword, ruid: h.user.uid)
        XCTAssertEqual(try change.result(of: "passwd"), 0)
        try h.answerWith(newPassword)
        let r = try h.run("keygate lock; keygate get -s svc -a a")
        XCTAssertEqual(r.status, 0, r.summary)
        XCTAssertTrue(r.out.contains("s1"), r.summary)
    }


    // MARK: - Password changes

    func test_passwordChange_presenceAndPlainItemsReadWithTheNewPassword_currentSetItemsAreInvalidated() throws {
        let (h, stack) = try userWithKeychain()
        let made = try h.run("""
            printf %s up | keygate add -s up -a a --access user-presence; echo up=$?
            printf %s cs | keygate add -s cs -a a --access current-set; echo cs=$?
            keygate lock
            """)
        XCTAssertTrue(made.out.contains("up=0") && made.out.contains("cs=0"), made.summary)
        let newPassword = "N3w-" + UUID().uuidString
        let change = try PAMDriver(stack: stack, user: h.user, steps: ["passwd"], password: h.user.password,
                                   newPassword: newPassword, ruid: h.user.uid)
        XCTAssertEqual(try change.result(of: "passwd"), 0)
        try h.answerWith(newPassword)
        let r = try h.run("""
            keygate lock
            printf 'plain=%s\\n' "$(keygate get -s svc -a a)"
            printf 'up=%s\\n' "$(keygate get -s up -a a)"
            keygate get -s cs -a a; echo csexit=$?
            """)
        XCTAssertTrue(r.out.contains("plain=s1"), r.summary)
        XCTAssertTrue(r.out.contains("up=up"), "user presence reads with the new password: \(r.summary)")
        XCTAssertTrue(r.out.contains("csexit=44"), "current-set items die with the old password: \(r.summary)")
    }

    func test_rootResetWithoutTheOldPassword_marksTheProtectorStale_andUnlockSaysHowToRecover() throws {
        let (h, stack) = try userWithKeychain()
        let newPassword = "R3set-" + UUID().uuidString
        let log = try SyslogCapture()
        // `passwd USER` run by root: pam_unix asks no old password, so PAM_OLDAUTHTOK is unset.
        let reset = try PAMDriver(stack: stack, user: h.user, steps: ["passwd"], password: "unused",
                                  newPassword: newPassword, log: log)
        XCTAssertEqual(try reset.result(of: "passwd"), 0, "the password change itself goes through")
        reset.finish()
        let marker = h.dataDirectory + "/protectors/stale"
        let attributes = try FileManager.default.attributesOfItem(atPath: marker)
        XCTAssertEqual((attributes[.ownerAccountID] as? NSNumber)?.uint32Value, h.user.uid, "written as the user")
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        XCTAssertTrue(log.lines().contains { $0.contains("marked stale") }, "the administrator is told")

        try h.answerWith(newPassword)
        let unlock = try h.run("keygate unlock")
        XCTAssertNotEqual(unlock.status, 0, unlock.summary)
        XCTAssertTrue(unlock.err.contains("reset without your old one") && unlock.err.contains("keygate passwd --recovery"),
                      unlock.summary)

        // `keygate passwd` with the old password repairs it and removes the mark.
        try h.queueAnswers([newPassword, h.user.password])
        let repaired = try h.run("keygate passwd && keygate lock && keygate get -s svc -a a")
        XCTAssertEqual(repaired.status, 0, repaired.summary)
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker), "a re-wrap removes the stale mark")
    }

    // MARK: - this-device-only

    func test_afterOpenSession_aThisDeviceOnlyItemOpensWithoutAPrompt_andNotAfterTheLastClose() throws {
        try ensureHostKey()
        let (h, stack) = try userWithKeychain()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let prompts = try h.promptCount()
        let open = try h.run("""
            printf %s dev-secret | keygate add -s tdo -a a --accessible when-unlocked-this-device-only; echo add=$?
            printf 'v=%s\\n' "$(keygate get -s tdo -a a)"
            """, askpass: false)
        XCTAssertTrue(open.out.contains("add=0"), open.summary)
        XCTAssertTrue(open.out.contains("v=dev-secret"), open.summary)
        XCTAssertEqual(try h.promptCount(), prompts, "no prompt while the session is open")

        try session.proceedToClose()
        // The master key left with the last session (the device gate is the gatekeeper's, never the user's).
        let closed = try h.run("keygate get -s tdo -a a; echo exit=$?", askpass: false)
        XCTAssertTrue(closed.out.contains("exit=36"), "locked: it needs the password again: \(closed.summary)")
        XCTAssertFalse(closed.out.contains("dev-secret"), closed.summary)
    }

    // MARK: - Never break a login

    func test_openSessionWithoutACapturedPassword_logsWhy_andIgnores() throws {
        let (h, _) = try userWithKeychain()
        let stack = try ignoreStack(h)
        let log = try SyslogCapture()
        // Session only, as in a terminal login whose auth ran in another process.
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["tty=/dev/pts/9", "open", "close"],
                                    password: h.user.password, log: log)
        try session.assertAnswered(["open", "close"], "PAM_IGNORE")
        session.finish()
        XCTAssertTrue(log.lines().contains { $0.contains("no password was captured at auth for \(h.user.name)") })
        try h.assertKeychain(.locked)
        // Root's audit record keeps the module's line too, whatever syslog does.
        let record = (try? String(contentsOfFile: "/var/log/keygate/gatekeeper.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(record.split(separator: "\n").contains {
            $0.contains(" source=pam_keygate priority=") && $0.contains("no password was captured at auth for \(h.user.name)")
        }, "root's record: \(record.suffix(2000))")
    }

    /// cron opens a session for every job and never types a password: nothing to tell an
    /// administrator, so nothing in the log. With `debug`, the line is there.
    func test_aCronSession_logsNothing_withoutDebug() throws {
        let (h, _) = try userWithKeychain()
        for (options, expected) in [("", false), ("debug", true)] {
            let stack = try ignoreStack(h, options: options)
            let log = try SyslogCapture()
            let session = try PAMDriver(stack: stack, user: h.user, steps: ["tty=cron", "open", "close"],
                                        password: h.user.password, log: log)
            XCTAssertEqual(try session.result(of: "open"), 0, "PAM_IGNORE")
            session.finish()
            XCTAssertEqual(log.lines().contains { $0.contains("no password was captured") }, expected,
                           "options '\(options)': \(log.lines())")
        }
    }

    func test_malformedOptions_areLoggedAndIgnored_andLoginStillWorks() throws {
        let (h, _) = try userWithKeychain()
        let options = "garbage \(String(repeating: "x", count: 300)) lock_after=abc min_uid=-1 lock_after= =x debug"
        let stack = try ignoreStack(h, options: options, sessionMayUnlock: true)
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "auth"), 0, "auth answers PAM_IGNORE")
        XCTAssertEqual(try session.result(of: "open"), 0)
        try h.assertKeychain(.unlocked, "bad options fall back to the defaults")
        try session.logOut()
        let lines = log.lines().joined(separator: "\n")
        for expected in ["unknown option 'garbage'", "too long", "lock_after=abc is not", "min_uid=-1 is not a uid"] {
            XCTAssertTrue(lines.contains(expected), "\(expected) in:\n\(lines)")
        }
    }

    func test_userWithoutAKeychain_moduleIgnores() throws {
        try requireModule()
        let h = try CLIUserHarness()
        let session = try PAMDriver(stack: try ignoreStack(h), user: h.user, steps: ["auth", "open", "close"],
                                    password: h.user.password)
        try session.assertAnswered(["auth", "open", "close"], "PAM_IGNORE")
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.dataDirectory + "/protectors"), "nothing created")
    }

    func test_corruptLoginProtector_moduleIgnores_andLogsIt() throws {
        let (h, _) = try userWithKeychain()
        try h.writeUserFile(".local/share/keygate/protectors/login.json", "{not json", mode: 0o600)
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: try ignoreStack(h), user: h.user, steps: ["auth", "open", "close"],
                                    password: h.user.password, log: log)
        try session.assertAnswered(["auth", "open", "close"], "PAM_IGNORE")
        session.finish()
        let lines = log.lines()
        XCTAssertTrue(lines.contains { $0.contains("login.json") && $0.contains("the login goes on without Keygate") },
                      lines.joined(separator: "\n"))
    }

    func test_fullKeyringQuota_moduleIgnores_andLoginSucceeds() throws {
        let (h, _) = try userWithKeychain()
        // Fill this user's kernel key quota (maxkeys/maxbytes) with keys of its own; the
        // user keyring outlives the filling process.
        let fill = try h.run("""
            big=$(head -c 2000 /dev/zero | tr '\\0' x); i=0
            while keyctl add user kgfill$i "$big" @u >/dev/null 2>&1; do i=$((i+1)); done
            while keyctl add user kgsmall$i x @u >/dev/null 2>&1; do i=$((i+1)); done
            echo filled=$i
            """, askpass: false)
        XCTAssertTrue(fill.out.contains("filled="), fill.summary)
        addTeardownBlock { [weak h] in _ = try? h?.run("keyctl clear @u", askpass: false) }   // weak: removing the user clears it too
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: try ignoreStack(h), user: h.user, steps: ["auth", "open", "close"],
                                    password: h.user.password, log: log)
        try session.assertAnswered(["auth", "open", "close"], "PAM_IGNORE: the login goes on")
        session.finish()
        let lines = log.lines()
        XCTAssertTrue(lines.contains { $0.contains("the login goes on without Keygate") }, lines.joined(separator: "\n"))
    }

    func test_unreadableDataFolder_moduleIgnores() throws {
        let (h, _) = try userWithKeychain()
        XCTAssertEqual(chmod(h.dataDirectory, 0), 0)
        defer { _ = chmod(h.dataDirectory, 0o700) }
        let session = try PAMDriver(stack: try ignoreStack(h), user: h.user, steps: ["auth", "open", "close", "passwd"],
                                    password: h.user.password, newPassword: "N3w-" + UUID().uuidString)
        try session.assertAnswered(["auth", "open", "close"], "PAM_IGNORE")
        XCTAssertEqual(try session.result(of: "passwd"), 0, "the password change goes through")
    }

    // MARK: - Real logins: the policy, deadlines, live sessions, messages, return values

    /// No lock_after option: the system policy's lock-after (an admin file) sets how long
    /// the login's unlock lasts; a user's own file does not count at login.
    func test_policyLockAfter_appliesAtLogin_withoutAModuleOption() throws {
        let (h, _) = try userWithKeychain()
        let admin = try policyFolder("[default]\nlock-after = 4242\n")
        let mine = try h.run("mkdir -p ~/.config/keygate/policies.d && printf '[default]\\nlock-after = 60\\n' > ~/.config/keygate/policies.d/50-mine.policy",
                             askpass: false)
        XCTAssertEqual(mine.status, 0, mine.summary)
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(Self.module) debug
        session required pam_permit.so
        session optional \(Self.module) debug
        """)
        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                    password: h.user.password, log: log, adminPolicy: admin)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let status = try h.run("keygate status", askpass: false)
        let seconds = status.out.split(separator: "\n").first { $0.contains("locks in") }
            .flatMap { $0.split(separator: " ").dropLast().last.flatMap { Int($0) } }
        XCTAssertNotNil(seconds, status.summary)
        XCTAssertTrue((4000...4242).contains(seconds ?? 0), "the admin policy's 4242 s, not 900 nor the user's 60: \(status.summary)")
        try session.proceed()
        session.finish()
        XCTAssertTrue(log.lines().contains { $0.contains("for 4242 s") }, log.lines().joined(separator: "\n"))
    }

    /// The module never decides the stack: in a `sufficient` line it answers PAM_IGNORE,
    /// so the modules after it still run (pam_deny here fails both), and it still unlocks.
    func test_sufficientLine_doesNotCutTheStackShort() throws {
        let (h, _) = try userWithKeychain()
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth sufficient \(Self.module) debug
        auth required pam_deny.so
        session sufficient \(Self.module) debug
        session required pam_deny.so
        """)
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try session.result(of: "auth"), 7, "PAM_AUTH_ERR: pam_deny ran after pam_keygate.so")
        XCTAssertNotEqual(try session.result(of: "open"), 0, "pam_deny ran after pam_keygate.so")
        try h.assertKeychain(.unlocked, "the module did its work though it decided nothing")
        try session.proceed()
        session.finish()
    }

    /// A login killed before close_session leaves no session behind: the next login's
    /// logout is the last one, and locks.
    func test_aKilledSession_thenALoginAndLogout_locks() throws {
        let (h, stack) = try userWithKeychain()
        let killed = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try killed.result(of: "open"), 0)
        killed.kill()
        let normal = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"], password: h.user.password)
        XCTAssertEqual(try normal.result(of: "open"), 0)
        let counted = try String(contentsOfFile: "/run/keygate/\(h.user.uid).sessions", encoding: .utf8)
        XCTAssertEqual(counted.split(separator: "\n").count, 1, "the killed session was dropped: \(counted)")
        try normal.proceedToClose()
        try h.assertKeychain(.locked)
    }

    /// A process of the user that holds the keychain's lock file cannot hang a login. A login
    /// whose keys.json already records the class keys and their seals takes no lock at all (it
    /// unlocks); one that must write keys.json (here its seals were removed, as the user may)
    /// gives up at its budget, logs why, and the login goes on.
    func test_aSameUserLockHolder_doesNotHangTheLogin() throws {
        let (h, stack) = try userWithKeychain()
        let keysJSON = h.dataDirectory + "/keys.json"
        // The user's own flock(1), in the background (the shell that starts it ends at once), with
        // no descriptor of the test process left open (Foundation would wait for it to end).
        let lockFile = h.dataDirectory + "/.keys.lock"
        let holder = try Subprocess.run(["sh", "-c", """
            python3 -c 'import os, sys; os.closerange(3, 4096); os.execvp(sys.argv[1], sys.argv[1:])' \\
              setpriv --reuid=\(h.user.uid) --regid=\(h.user.uid) --clear-groups flock "$1" sleep 40 </dev/null >/dev/null 2>&1 &
            echo pid=$!
            for i in $(seq 100); do flock -n "$1" true || exit 0; sleep 0.05; done; exit 1
            """, "sh", lockFile])
        XCTAssertEqual(holder.status, 0, "the holder has the lock: \(holder.summary)")
        let holderPID = holder.values["pid"].flatMap { Int32($0) }
        defer { if let holderPID { _ = kill(holderPID, SIGKILL) } }
        let unchanged = try SyslogCapture()
        let quick = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: h.user.password,
                                  log: unchanged)
        XCTAssertEqual(try quick.result(of: "close"), 0)
        quick.finish()
        XCTAssertTrue(unchanged.lines().contains { $0.contains("unlocked the keychain of") }, unchanged.lines().joined(separator: "\n"))
        XCTAssertFalse(unchanged.lines().contains { $0.contains("past this call's time budget") }, "nothing to write: no lock")

        let stripped = try h.run(#"""
            python3 -c 'import json, sys; p = sys.argv[1]; k = json.load(open(p)); k.pop("seals", None); json.dump(k, open(p, "w"))' "\#(keysJSON)"; echo strip=$?
            """#, askpass: false)
        XCTAssertEqual(stripped.values["strip"], "0", stripped.summary)
        let log = try SyslogCapture()
        let start = Date()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        XCTAssertEqual(try session.result(of: "close"), 0)
        let elapsed = Date().timeIntervalSince(start)
        session.finish()
        XCTAssertLessThan(elapsed, 15, "the 40 s holder must not hold the login (budget: 2 s beyond the calibrated KDF time)")
        XCTAssertTrue(log.lines().contains { $0.contains("past this call's time budget") }, log.lines().joined(separator: "\n"))
    }

    /// The helper acts as the user with the primary group alone where that reaches the data
    /// folder (no NSS group lookup at login), and with every group of the user where it does
    /// not: a home that only a supplementary group may enter still unlocks at login, and one the
    /// user reaches with no group at all unlocks without the lookup.
    func test_login_actsWithThePrimaryGroup_andWithEveryGroupWhereTheHomeNeedsOne() throws {
        let (h, stack) = try userWithKeychain()
        func logIn(_ what: String) throws -> [String] {
            let log = try SyslogCapture()
            let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "wait", "close"],
                                        password: h.user.password, log: log)
            try session.assertAnswered(["auth", "open"], what)
            try h.assertKeychain(.unlocked, what)
            try session.logOut(what)
            try h.assertKeychain(.locked, what)
            return log.lines()
        }
        let plain = try logIn("a home of the user's own")
        XCTAssertTrue(plain.contains { $0.contains("acting as \(h.user.name) with its primary group only") }, plain.joined(separator: "\n"))

        // The home becomes root's, entered through a group the user has only as a supplementary one.
        let group = "kgsup\(UInt32.random(in: 0..<1_000_000))"
        for command in [["groupadd", group], ["gpasswd", "-a", h.user.name, group]] {
            let made = try Subprocess.run(command)
            XCTAssertEqual(made.status, 0, "\(command): \(made.err)")
        }
        defer { _ = try? Subprocess.run(["groupdel", group]) }
        guard let entry = getgrnam(group) else { return XCTFail("no group \(group) after groupadd") }
        let groupID = entry.pointee.gr_gid
        let info = try FileManager.default.attributesOfItem(atPath: h.user.home)
        let mode = (info[.posixPermissions] as? NSNumber)?.uint16Value ?? 0o700
        XCTAssertEqual(chown(h.user.home, 0, groupID), 0)
        XCTAssertEqual(chmod(h.user.home, 0o770), 0)
        let primary = getpwnam(h.user.name)?.pointee.pw_gid ?? h.user.uid
        defer {
            _ = chown(h.user.home, h.user.uid, primary)
            _ = chmod(h.user.home, mode_t(mode))
        }
        let grouped = try logIn("a home only a supplementary group enters")
        XCTAssertTrue(grouped.contains { $0.contains("acting as \(h.user.name) with its ") && $0.contains(" groups") },
                      grouped.joined(separator: "\n"))
        XCTAssertFalse(grouped.contains { $0.contains("primary group only") }, grouped.joined(separator: "\n"))
        XCTAssertTrue(grouped.contains { $0.contains("unlocked the keychain of \(h.user.name)") }, grouped.joined(separator: "\n"))
    }

    /// The module's own look into the user's keyring (at an open whose auth ran elsewhere, as
    /// sshd's) and its lock at the last close run in a child that shares the application's memory
    /// (CLONE_VFORK). Becoming the user clears the dumpable flag of that shared memory; the
    /// application gets it back as it was, and the child's work is done all the same.
    func test_theSessionsChild_doesItsWork_andLeavesTheApplicationAsItWas() throws {
        let (h, stack) = try userWithKeychainUnlockedByAnEarlierAuth()

        let log = try SyslogCapture()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["dumpable", "open", "dumpable", "close", "dumpable"],
                                    password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "dumpable"), 1, "pam-driver starts dumpable")
        XCTAssertEqual(try session.result(of: "open"), 0)
        XCTAssertEqual(try session.result(of: "dumpable"), 1, "after the open's look into the user's keyring")
        XCTAssertEqual(try session.result(of: "close"), 0)
        XCTAssertEqual(try session.result(of: "dumpable"), 1, "after the close's lock")
        session.finish()
        let lines = log.lines()
        XCTAssertTrue(lines.contains { $0.contains("session opened for \(h.user.name): 1 open; the keychain is unlocked") },
                      lines.joined(separator: "\n"))
        XCTAssertTrue(lines.contains { $0.contains("locked the keychain of \(h.user.name): last session closed") },
                      lines.joined(separator: "\n"))
        try h.assertKeychain(.locked, "after the last close")
    }

    /// The attack on that child: a process of the user stops it (SIGSTOP: once it has become the
    /// user, it is the user's to signal) while it shares the root application's memory, and tries
    /// what would read or write that memory through it: ptrace attach, /proc/PID/mem,
    /// /proc/PID/environ, process_vm_readv (Tests/PAMDriver/child-seizer.c). Every one is refused,
    /// because becoming the user left the shared memory non-dumpable; the seizer then kills the
    /// child, the open goes on without it, and every step of the application still answers.
    func test_aSameUserProcessThatStopsTheSessionsChild_cannotReachTheApplicationThroughIt() throws {
        let (h, _) = try userWithKeychainUnlockedByAnEarlierAuth()
        // unlock_only: the close never locks, so every open of the transactions below asks the keyring.
        let sessions = try Stack(h, """
        auth required pam_unix.so
        account required pam_unix.so
        session required pam_permit.so
        session optional \(Self.module) unlock_only
        """)
        let seizerPath = NSTemporaryDirectory() + "keygate-child-seizer-\(getpid())"
        let compiled = try Subprocess.run(["cc", "-O2", "-Wall", "-o", seizerPath, PackagePaths.root + "/Tests/PAMDriver/child-seizer.c"])
        XCTAssertEqual(compiled.status, 0, compiled.err)
        defer { try? FileManager.default.removeItem(atPath: seizerPath) }
        XCTAssertEqual(chmod(seizerPath, 0o755), 0)

        let seizer = Process()
        let seized = Pipe()
        seizer.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        seizer.arguments = ["--reuid=\(h.user.uid)", "--regid=\(getpwnam(h.user.name)?.pointee.pw_gid ?? h.user.uid)", "--clear-groups",
                            seizerPath, "120", "3", URL(fileURLWithPath: try PAMDriver.binary()).lastPathComponent]
        seizer.standardOutput = seized
        try seizer.run()
        defer { if seizer.isRunning { seizer.terminate() } }
        // Each transaction makes 300 children; the seizer stops about one in a hundred on two cores.
        for round in 0..<5 where seizer.isRunning {
            let session = try PAMDriver(stack: sessions, user: h.user, steps: Array(repeating: ["open", "close"], count: 300).flatMap { $0 },
                                        password: h.user.password)
            for pair in 0..<300 {
                XCTAssertEqual(try session.result(of: "open"), 0, "round \(round), open \(pair)")
                XCTAssertEqual(try session.result(of: "close"), 0, "round \(round), close \(pair)")
            }
            session.finish()
        }
        if seizer.isRunning { seizer.terminate() }
        seizer.waitUntilExit()
        let answer = String(decoding: seized.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let counts = Dictionary(uniqueKeysWithValues: answer.split(whereSeparator: \.isWhitespace).compactMap { field -> (String, Int)? in
            let parts = field.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            return (String(parts[0]), value)
        })
        XCTAssertGreaterThan(counts["caught"] ?? 0, 0, "the seizer never stopped the child, so nothing was tried: \(answer)")
        for attempt in ["attached", "mem", "environ", "vmread"] {
            XCTAssertEqual(counts[attempt], 0, "\(attempt) reached the child's memory: \(answer)")
        }
    }

    /// A login.json that asks for far more Argon2id work than root's calibration is
    /// refused before any derivation: the login is not held for a minute.
    func test_anInflatedKDFCost_isRefusedQuickly() throws {
        let (h, stack) = try userWithKeychain()
        let edit = try h.run("""
            python3 - "\(h.dataDirectory)/protectors/login.json" <<'PY'
            import json, sys
            path = sys.argv[1]
            data = json.load(open(path))
            data["kdf"]["opsLimit"] = 64
            data["kdf"]["memLimitBytes"] = 1024 * 1024 * 1024
            json.dump(data, open(path, "w"))
            PY
            """, askpass: false)
        XCTAssertEqual(edit.status, 0, edit.summary)
        let log = try SyslogCapture()
        let start = Date()
        let session = try PAMDriver(stack: stack, user: h.user, steps: ["auth", "open", "close"], password: h.user.password, log: log)
        XCTAssertEqual(try session.result(of: "auth"), 0)
        XCTAssertEqual(try session.result(of: "open"), 0)
        let elapsed = Date().timeIntervalSince(start)
        session.finish()
        XCTAssertLessThan(elapsed, 10, "64 passes over 1 GiB take about a minute; refusing takes at most one calibration")
        XCTAssertTrue(log.lines().contains { $0.contains("64 passes and 1024 MiB") && $0.contains("refused without deriving") },
                      log.lines().joined(separator: "\n"))
        try h.assertKeychain(.locked)
    }

    /// After root reset the password (chpasswd, `passwd USER`), a login cannot unlock:
    /// one line on the screen says why and what to run.
    func test_afterARootReset_theLoginSaysWhyOnTheScreen() throws {
        let (h, stack) = try userWithKeychain()
        let newPassword = "R3set-" + UUID().uuidString
        let reset = try PAMDriver(stack: stack, user: h.user, steps: ["passwd"], password: "unused", newPassword: newPassword)
        XCTAssertEqual(try reset.result(of: "passwd"), 0)
        reset.finish()
        let login = try PAMDriver(stack: stack, user: h.user, steps: ["tty=/dev/pts/9", "auth", "open", "close"], password: newPassword)
        XCTAssertEqual(try login.result(of: "auth"), 0, "the login itself goes through")
        XCTAssertEqual(try login.result(of: "close"), 0)
        login.finish()
        let info = login.messages.filter { $0.hasPrefix("pam-info: Keygate:") }
        XCTAssertEqual(info.count, 1, "one line: \(login.messages)")
        XCTAssertTrue(info.first?.contains("keygate passwd") ?? false, "\(info)")
        // status and doctor name the problem and the next step too.
        let status = try h.run("keygate status", askpass: false)
        XCTAssertTrue(status.out.contains("state: locked"), status.summary)
        XCTAssertTrue(status.out.contains("problem: your password was reset without the old one") && status.out.contains("keygate passwd --recovery"),
                      status.summary)
        let doctor = try h.run("keygate doctor", askpass: false)
        let line = doctor.out.split(separator: "\n").first { $0.contains("password was reset without the old one") }
        XCTAssertTrue(line?.contains("WARN") ?? false, doctor.summary)
        XCTAssertTrue(doctor.out.contains("keygate passwd --recovery"), doctor.summary)
        XCTAssertFalse(doctor.out.contains("all checks passed"), doctor.summary)
    }

    // MARK: - Option fuzzing

    func test_optionParser_survivesTenThousandRandomArgumentVectors() throws {
        // ModuleOptions.swift compiled alone with a fuzz driver (the PAMKeygate target has no test target).
        let out = NSTemporaryDirectory() + "keygate-options-fuzz-\(getpid())"
        let swiftc = ["/opt/swift/usr/bin/swiftc", "swiftc"].first { FileManager.default.isExecutableFile(atPath: $0) } ?? "swiftc"
        let cc = try Subprocess.run([swiftc, "-O", PackagePaths.root + "/Sources/PAMKeygate/ModuleOptions.swift",
                                     PackagePaths.root + "/Tests/PAMDriver/OptionsFuzz/main.swift", "-o", out])
        XCTAssertEqual(cc.status, 0, cc.err)
        let run = try Subprocess.run([out, "20000"])
        XCTAssertEqual(run.status, 0, run.out + run.err)
        XCTAssertTrue(run.out.hasPrefix("ok 20000"), run.out)
    }

    func test_randomOptionLines_throughRealLibpam_neverBreakTheLogin() throws {
        try requireModule()
        let h = try CLIUserHarness()
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz_=-0123456789:/.,+%~éß".unicodeScalars)
        for round in 0..<40 {
            let options = (0..<Int.random(in: 1...6, using: &rng)).map { _ in
                String(String.UnicodeScalarView((0..<Int.random(in: 1...60, using: &rng)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &rng)]
                }))
            }.joined(separator: " ")
            let session = try PAMDriver(stack: try ignoreStack(h, options: options), user: h.user,
                                        steps: ["auth", "open", "close"], password: h.user.password)
            try session.assertAnswered(["auth", "open", "close"], "round \(round) with options: \(options)")
        }
    }

    // MARK: - Helpers

    private func requireModule() throws {
        try Requirement.require(FileManager.default.fileExists(atPath: Self.modulePath),
                                "the built PAM module at \(Self.module) (run make pam)")
    }

    /// A stack in which the whole transaction succeeds only if pam_keygate.so answers
    /// PAM_IGNORE (or, with `sessionMayUnlock`, PAM_SUCCESS at session): any error code
    /// ends it. pam_unix decides the login.
    private func ignoreStack(_ h: CLIUserHarness, options: String = "debug", sessionMayUnlock: Bool = false) throws -> Stack {
        let session = sessionMayUnlock ? "ok" : "bad"
        // The uid, not the harness: XCTest keeps teardown blocks (and what they capture) until
        // the whole run ends, and the harness removes its user only when it is released.
        let uid = h.user.uid
        addTeardownBlock { _ = try? FileManager.default.removeItem(atPath: "/run/keygate/\(uid).sessions") }
        return try Stack(h, """
        auth required pam_unix.so
        auth [ignore=ignore success=bad default=die] \(Self.module) \(options)
        account required pam_unix.so
        session required pam_permit.so
        session [ignore=ignore success=\(session) default=die] \(Self.module) \(options)
        password required pam_unix.so
        password [ignore=ignore success=bad default=die] \(Self.module) \(options)
        """)
    }

    /// `userWithKeychain`, unlocked by an auth in a transaction of its own, so that the next
    /// transaction's open asks the user's keyring, as after sshd's auth in another process.
    private func userWithKeychainUnlockedByAnEarlierAuth() throws -> (CLIUserHarness, Stack) {
        let (h, stack) = try userWithKeychain()
        let unlock = try PAMDriver(stack: stack, user: h.user, steps: ["auth"], password: h.user.password)
        try unlock.assertAnswered(["auth"], "the unlock, in a transaction of its own")
        unlock.finish()
        try h.assertKeychain(.unlocked, "after auth")
        return (h, stack)
    }

    /// A root-owned folder with one policy file, for PAMDriver's `adminPolicy`.
    private func policyFolder(_ text: String) throws -> String {
        let folder = NSTemporaryDirectory() + "kg-admin-policy-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        try text.write(toFile: folder + "/50-test.policy", atomically: true, encoding: .utf8)
        XCTAssertEqual(chmod(folder + "/50-test.policy", 0o644), 0)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: folder) }
        return folder
    }

    /// The released module reads /var/lib/keygate/host.key: made with the built CLI if
    /// absent (root-owned, harmless), never replaced or removed.
    private func ensureHostKey() throws {
        try Requirement.require(Requirement.isRoot, "root, to make the host key")
        guard !FileManager.default.fileExists(atPath: "/var/lib/keygate/host.key") else { return }
        let made = try Subprocess.run([PackagePaths.keygateBinary, "setup-host"], environment: ["PATH": "/usr/bin:/bin"])
        XCTAssertEqual(made.status, 0, made.err)
    }

    /// A user whose keychain the CLI created (holding item svc/a = "s1") and then locked,
    /// and a login stack: pam_unix decides, pam_keygate.so follows.
    private func userWithKeychain() throws -> (CLIUserHarness, Stack) {
        try requireModule()
        let h = try CLIUserHarness()
        let made = try h.run("printf %s s1 | keygate add -s svc -a a && keygate lock")
        XCTAssertEqual(made.status, 0, made.summary)
        let stack = try Stack(h, """
        auth required pam_unix.so
        auth optional \(Self.module) debug
        account required pam_unix.so
        session required pam_permit.so
        session optional \(Self.module) debug
        password required pam_unix.so
        password optional \(Self.module) debug
        """)
        // The uid, not the harness: XCTest keeps teardown blocks (and what they capture) until
        // the whole run ends, and the harness removes its user only when it is released.
        let uid = h.user.uid
        addTeardownBlock { _ = try? FileManager.default.removeItem(atPath: "/run/keygate/\(uid).sessions") }
        return (h, stack)
    }
}

/// A PAM service file "login-test" in the harness's temporary folder.
struct Stack {
    let confdir: String
    let service = "login-test"
    init(_ h: CLIUserHarness, _ text: String) throws {
        try self.init(confdir: h.confdir, text)
    }

    init(confdir: String, _ text: String) throws {
        self.confdir = confdir
        try (text + "\n").write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
    }
}

/// One running pam-driver: a PAM transaction whose steps the test reads one by one
/// and releases at each `wait`.
final class PAMDriver {
    private let process = Process()
    private let log: SyslogCapture
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = ""

    /// Lines the modules showed the person ("pam-info: TEXT"), as read so far.
    private(set) var messages: [String] = []

    /// `adminPolicy`: a folder bound over /etc/keygate/policies.d for this driver only;
    /// `auditFolder`: one bound over /var/log/keygate (root's audit record) for it only.
    init(stack: Stack, user: TestUser, steps: [String], password: String, newPassword: String = "",
         ruid: UInt32? = nil, log: SyslogCapture? = nil, adminPolicy: String? = nil, auditFolder: String? = nil,
         asUser: Bool = false) throws {
        let driverArguments = (ruid.map { ["--ruid", String($0)] } ?? []) + [stack.confdir, stack.service, user.name] + steps
        // asUser: the whole driver runs as the user (a screen locker's PAM, say), not as root.
        var dropToUser: [String] = []
        if asUser, let entry = getpwnam(user.name) {
            dropToUser = ["/usr/bin/setpriv", "--reuid=\(entry.pointee.pw_uid)", "--regid=\(entry.pointee.pw_gid)", "--clear-groups"]
        }
        // Always in a private mount namespace whose /dev/log is a capture's socket: the
        // host's /dev/log may be missing, or a listener that stopped reading (sends block).
        let capture = try log ?? SyslogCapture()
        self.log = capture
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-m", "--propagation", "private", PackagePaths.root + "/Tests/PAMDriver/with-log-socket.sh",
                             capture.folder] + dropToUser + [try Self.binary()] + driverArguments
        process.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PAM_DRIVER_PASSWORD": password,
                               "PAM_DRIVER_NEW_PASSWORD": newPassword]
            .merging(adminPolicy.map { ["KEYGATE_TEST_ADMIN_POLICY": $0] } ?? [:]) { $1 }
            .merging(auditFolder.map { ["KEYGATE_TEST_AUDIT_FOLDER": $0] } ?? [:]) { $1 }
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning { process.terminate() }
        log.stop()
    }

    /// The status the driver printed for `step` (reading its output up to there).
    func result(of step: String) throws -> Int32? {
        while true {
            if let newline = buffered.firstIndex(of: "\n") {
                let line = buffered[..<newline]
                buffered = String(buffered[buffered.index(after: newline)...])
                if line.hasPrefix("pam-") { messages.append(String(line)) }
                let parts = line.split(separator: " ")
                if parts.count == 2, parts[0] == step { return Int32(parts[1]) }
                continue
            }
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { return nil }  // the driver ended before that step
            buffered += String(decoding: data, as: UTF8.self)
        }
    }

    /// SIGKILL, as a login killed before close_session; waits for it to be gone.
    func kill() {
        _ = Glibc.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Waits for the driver to end (after its last step).
    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// Lets the driver past its next `wait`.
    func proceed() throws {
        try input.fileHandleForWriting.write(contentsOf: Data("go\n".utf8))
    }

    /// Lets the driver past its `wait` to the close, and asserts the close answered 0 (the stack's
    /// success: the module ignored it, never failed it).
    func proceedToClose(_ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        try proceed()
        XCTAssertEqual(try result(of: "close"), 0, message, file: file, line: line)
    }

    /// The whole logout of a session that waits before its close: the close answers 0, and the
    /// driver ends.
    func logOut(_ message: String = "", file: StaticString = #filePath, line: UInt = #line) throws {
        try proceedToClose(message, file: file, line: line)
        finish()
    }

    /// Asserts that each of `steps`, in order, answered 0: the stack went on past the module.
    func assertAnswered(_ steps: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        for step in steps {
            XCTAssertEqual(try result(of: step), 0, "\(step): \(message)", file: file, line: line)
        }
    }

    /// Compiles Tests/PAMDriver/pam-driver.c once per test process.
    static func binary() throws -> String {
        try compiled.get()
    }

    private static let compiled: Result<String, any Error> = Result {
        let out = NSTemporaryDirectory() + "keygate-pam-driver-\(getpid())"
        let cc = try Subprocess.run(["cc", "-O", "-Wall", "-o", out, PackagePaths.root + "/Tests/PAMDriver/pam-driver.c", "-lpam"])
        guard cc.status == 0 else { throw DriverBuildError(description: "cannot compile the PAM driver: \(cc.err)") }
        return out
    }
}

extension CLIUserHarness {
    /// The user's Keygate data folder (the default under the home).
    var dataDirectory: String { user.home + "/.local/share/keygate" }
}

struct DriverBuildError: Error, CustomStringConvertible {
    let description: String
}

/// A syslog stand-in: a datagram socket that PAMDriver makes the driver's /dev/log
/// (Tests/PAMDriver/with-log-socket.sh), so a test reads the lines an administrator
/// would find in the journal. A thread drains it all the time: a Unix datagram queue
/// holds only net.unix.max_dgram_qlen (10) messages before senders block.
final class SyslogCapture: @unchecked Sendable {
    let folder: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [String] = []
    private var stopped = false

    init() throws {
        folder = "/tmp/kg-syslog-" + String(UUID().uuidString.prefix(8))
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        let path = folder + "/log"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard fd >= 0, bound == 0, chmod(path, 0o666) == 0 else {
            throw DriverBuildError(description: "cannot make the syslog socket \(path): errno \(errno)")
        }
        Thread.detachNewThread { [self] in drain() }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Stops the reader thread and closes the socket.
    func stop() {
        lock.lock(); stopped = true; lock.unlock()
    }

    private func drain() {
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            lock.lock(); let done = stopped; lock.unlock()
            if done { close(fd); return }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            guard n > 0 else { continue }
            let line = String(decoding: buffer.prefix(n), as: UTF8.self)
            lock.lock(); received.append(line); lock.unlock()
        }
    }

    /// Every line received so far ("<priority>date pam_keygate(service:type): text"),
    /// after a short pause for lines still in the socket.
    func lines() -> [String] {
        Thread.sleep(forTimeInterval: 0.3)
        lock.lock(); defer { lock.unlock() }
        return received
    }
}
