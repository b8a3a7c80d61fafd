// Fingerprint presence (docs/GATEKEEPER.md, "Fingerprints"), with the real parts: real fprintd, pam_fprintd and polkitd
// with libfprint's virtual device on a private system bus (scripts/fprint-session), the built
// keygate run as a created user, and the built keygate-gatekeeper installed setuid root,
// which runs pam_fprintd through the keygate-biometry stack and binds biometry-current-set
// items to the digest of the enrolled prints. A "finger" is a name scanned on the virtual
// device by the test (root): finger-a is enrolled, finger-b never is.
import Foundation
import KeygateTestSupport
import XCTest

final class FingerprintPresenceTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.theGateItself

    private var session: FprintSession?

    override func tearDown() {
        session?.stop()
        session = nil
        super.tearDown()
    }

    /// A user with finger-a enrolled as the right index finger, and the biometric stack of
    /// pam.d/keygate-biometry (a shorter scan timeout) in the harness's PAM folder.
    private func enrolledUser(scanTimeout: Int = 10) throws -> (CLIUserHarness, FprintSession, [String: String]) {
        let fprint = try FprintSession()
        session = fprint
        let h = try CLIUserHarness()
        let stack = "auth required pam_fprintd.so max-tries=1 timeout=\(scanTimeout)\naccount required pam_unix.so\n"
        try stack.write(toFile: h.confdir + "/keygate-biometry", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.confdir + "/keygate-biometry")
        try fprint.enroll(h.user.name, as: "finger-a")
        return (h, fprint, fprint.gatekeeperEnvironment)
    }

    /// A read with the finger resting on libfprint's virtual reader: each verification the read
    /// starts scans it once. A read the reader timed out on prints what fprintd and the finger
    /// did (FprintSession.postMortem); the test judges the outcome.
    private func withRestingFinger(_ fprint: FprintSession, _ read: () throws -> ProcessResult) throws -> ProcessResult {
        fprint.touch("finger-a")
        let result = try read()
        fprint.settle()
        if result.err.contains("Verification timed out") { print(fprint.postMortem()) }
        return result
    }

    func test_biometryCurrentSet_opensWithTheEnrolledFinger_notAWrongOne_notThePasswordAlone() throws {
        let (h, fprint, env) = try enrolledUser()
        let add = try h.run("""
            printf %s s3cret | keygate add -s fp -a a --access biometry-current-set; echo add=$?
            """, extraEnvironment: env)
        XCTAssertEqual(add.values["add"], "0", add.summary)

        let right = try withRestingFinger(fprint) { try h.run("printf 'get=%s\\n' \"$(keygate get -s fp -a a)\"", extraEnvironment: env) }
        XCTAssertEqual(right.values["get"], "s3cret", "the enrolled finger opens it: \(right.summary)")
        XCTAssertTrue(right.err.contains("finger"), "fprintd's prompt is relayed: \(right.summary)")

        let asked = try h.promptCount()
        fprint.touch("finger-b")
        let wrong = try h.run("keygate get -s fp -a a; echo get=$?; keygate status", extraEnvironment: env)
        XCTAssertEqual(wrong.values["get"], "51", "errSecAuthFailed: \(wrong.summary)")
        XCTAssertFalse(wrong.out.contains("s3cret"), wrong.summary)
        XCTAssertTrue(wrong.err.contains("failed fingerprint match"), wrong.summary)
        XCTAssertTrue(wrong.out.contains("1 failed attempt since the last success"), "the scan was counted: \(wrong.summary)")

        // The password alone: the askpass answers it, but the item asks for a finger, and none comes.
        fprint.settle()
        let started = Date()
        let password = try h.run("keygate get -s fp -a a; echo get=$?", extraEnvironment: env)
        XCTAssertEqual(password.values["get"], "51", password.summary)
        XCTAssertFalse(password.out.contains("s3cret"), password.summary)
        XCTAssertTrue(password.err.contains("no finger was placed"), password.summary)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "within the scan timeout: \(password.summary)")
        XCTAssertLessThanOrEqual(try h.promptCount() - asked, 2,
                                 "at most the keychain's unlocks asked for the password, never the item: \(h.prompts())")
    }

    func test_biometryCurrentSet_afterKeygateLock_needsThePasswordForTheKeychain_andTheFingerForTheItem() throws {
        let (h, fprint, env) = try enrolledUser()
        _ = try h.run("printf %s s3cret | keygate add -s fp -a a --access biometry-current-set; keygate lock --all", extraEnvironment: env)
        let r = try withRestingFinger(fprint) { try h.run("keygate lock; printf 'get=%s\\n' \"$(keygate get -s fp -a a)\"", extraEnvironment: env) }
        XCTAssertEqual(r.values["get"], "s3cret", r.summary)
    }

    func test_enrollingAnotherFinger_invalidatesBiometryCurrentSet_butNotBiometryAny() throws {
        let (h, fprint, env) = try enrolledUser()
        let add = try h.run("""
            printf %s cur | keygate add -s cur -a a --access biometry-current-set; echo a1=$?
            printf %s any | keygate add -s any -a a --access biometry-any; echo a2=$?
            """, extraEnvironment: env)
        XCTAssertEqual(add.values["a1"], "0", add.summary)
        XCTAssertEqual(add.values["a2"], "0", add.summary)
        try fprint.enroll(h.user.name, finger: "left-index-finger", as: "finger-c")
        fprint.settle()

        let dead = try h.run("keygate get -s cur -a a; echo get=$?", extraEnvironment: env)
        XCTAssertEqual(dead.values["get"], "44", "errSecItemNotFound: \(dead.summary)")
        XCTAssertTrue(dead.err.contains("invalidated"), dead.summary)
        XCTAssertTrue(dead.err.contains("enrolled"), dead.summary)
        let any = try withRestingFinger(fprint) { try h.run("printf 'get=%s\\n' \"$(keygate get -s any -a a)\"", extraEnvironment: env) }
        XCTAssertEqual(any.values["get"], "any", "biometry-any survives a new finger: \(any.summary)")

        // An item added now is bound to the new set. (The virtual reader cannot identify: fprintd
        // verifies against the first enrolled finger, as pam_fprintd does on such readers.)
        _ = try h.run("printf %s cur2 | keygate add -s cur2 -a a --access biometry-current-set", extraEnvironment: env)
        let fresh = try withRestingFinger(fprint) { try h.run("printf 'get=%s\\n' \"$(keygate get -s cur2 -a a)\"", extraEnvironment: env) }
        XCTAssertEqual(fresh.values["get"], "cur2", fresh.summary)

        // Deleting every print kills it too.
        fprint.settle()
        try fprint.deletePrints(h.user.name)
        let gone = try h.run("keygate get -s cur2 -a a; echo get=$?", extraEnvironment: env)
        XCTAssertEqual(gone.values["get"], "44", gone.summary)
    }

    func test_aPasswordChange_leavesBiometryCurrentSetReadable_andKillsCurrentSet() throws {
        let (h, fprint, env) = try enrolledUser()
        let add = try h.run("""
            printf %s fing | keygate add -s fp -a a --access biometry-current-set; echo a1=$?
            printf %s pass | keygate add -s pw -a a --access current-set; echo a2=$?
            """, extraEnvironment: env)
        XCTAssertEqual(add.values["a1"], "0", add.summary)
        XCTAssertEqual(add.values["a2"], "0", add.summary)
        let old = h.user.password, new = "new-\(UUID().uuidString.prefix(10))"
        try h.user.changePassword(to: new)
        try h.answerWith(new)
        try h.queueAnswers([new, old])
        let passwd = try h.run("keygate passwd; echo passwd=$?", extraEnvironment: env)
        XCTAssertEqual(passwd.values["passwd"], "0", passwd.summary)
        let r = try withRestingFinger(fprint) { try h.run("""
            printf 'get=%s\\n' "$(keygate get -s fp -a a)"
            keygate get -s pw -a a; echo pw=$?
            """, extraEnvironment: env) }
        XCTAssertEqual(r.values["get"], "fing", "a password change does not touch the enrolled set: \(r.summary)")
        XCTAssertEqual(r.values["pw"], "44", "Keygate's current-set dies with the password: \(r.summary)")
    }

    func test_fprintdHung_thenStopped_eachAClearErrorWithinTheDeadline() throws {
        let (h, fprint, env) = try enrolledUser()
        _ = try h.run("printf %s s | keygate add -s fp -a a --access biometry-any; keygate unlock", extraEnvironment: env)
        let pid = try XCTUnwrap(fprint.fprintdPID)

        kill(pid, SIGSTOP)
        var started = Date()
        let hung = try h.run("keygate get -s fp -a a; echo get=$?", extraEnvironment: env, timeout: 60)
        let hungTime = Date().timeIntervalSince(started)
        kill(pid, SIGCONT)
        XCTAssertEqual(hung.values["get"], "53", "errSecNotAvailable: \(hung.summary)")
        XCTAssertTrue(hung.err.contains("did not answer"), hung.summary)
        XCTAssertLessThan(hungTime, 20, "within the deadline (fprintd asked for 5 s): \(hung.summary)")

        kill(pid, SIGTERM)
        Thread.sleep(forTimeInterval: 1)
        started = Date()
        let stopped = try h.run("keygate get -s fp -a a; echo get=$?", extraEnvironment: env, timeout: 60)
        XCTAssertEqual(stopped.values["get"], "53", stopped.summary)
        XCTAssertTrue(stopped.err.contains("fprintd is not running"), stopped.summary)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, stopped.summary)
    }

    func test_noFingerEnrolled_isAClearError_andBiometryCurrentSetCannotBeAdded() throws {
        let fprint = try FprintSession()
        session = fprint
        let h = try CLIUserHarness()
        let env = fprint.gatekeeperEnvironment
        let r = try h.run("""
            printf %s s | keygate add -s any -a a --access biometry-any; echo any=$?
            printf %s s | keygate add -s cur -a a --access biometry-current-set; echo cur=$?
            keygate get -s any -a a; echo get=$?
            keygate status | grep fingerprint
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["any"], "0", r.summary)
        XCTAssertEqual(r.values["cur"], "53", "no enrolled set to bind to: \(r.summary)")
        XCTAssertEqual(r.values["get"], "53", r.summary)
        XCTAssertTrue(r.err.contains("no finger enrolled"), r.summary)
    }

    func test_sameUserAttacker_withNoFinger_andAnAskpassThatCancels_readsNothing() throws {
        let (h, fprint, env) = try enrolledUser(scanTimeout: 3)
        _ = try h.run("printf %s s3cret | keygate add -s fp -a a --access biometry-current-set", extraEnvironment: env)
        let victim = try withRestingFinger(fprint) { try h.run("printf 'get=%s\\n' \"$(keygate get -s fp -a a)\"", extraEnvironment: env) }
        XCTAssertEqual(victim.values["get"], "s3cret", victim.summary)
        // Inside the victim's window, another session of the same uid: an askpass that cancels, no finger.
        fprint.settle()
        try h.writeUserFile("cancel", "#!/bin/sh\nexit 1\n", mode: 0o700)
        let attacker = try h.run("""
            KEYGATE_ASKPASS="$HOME/cancel" keygate get -s fp -a a; echo get=$?
            KEYGATE_ASKPASS= keygate get -s fp -a a; echo none=$?
            """, askpass: false, extraEnvironment: env)
        XCTAssertNotEqual(attacker.values["get"], "0", attacker.summary)
        XCTAssertNotEqual(attacker.values["none"], "0", attacker.summary)
        XCTAssertFalse(attacker.out.contains("s3cret"), attacker.summary)

        // Inside the victim's finger-unlock window (a password unlock armed it), the keychain locked:
        // the sealed master key is the attacker's to read and copy, and opens nothing without the
        // enrolled finger. The attacker rests their own finger on the reader (fprintd answers no-match
        // at once; no finger at all, the scan's timeout, is what the reads above and
        // test_biometryCurrentSet_opensWithTheEnrolledFinger_notAWrongOne_notThePasswordAlone wait out).
        _ = try h.run("printf %s plain | keygate add -s plain -a a --access none; keygate unlock", extraEnvironment: env)
        XCTAssertTrue(FileManager.default.fileExists(atPath: "/run/keygate/finger/\(h.user.uid)"), "armed")
        fprint.touch("finger-b")
        let locked = try h.run("""
            keygate lock
            cp "$(find "$HOME" -name finger-unlock -type f | head -n1)" "$HOME/stolen" && echo copied=yes
            KEYGATE_ASKPASS="$HOME/cancel" keygate get -s plain -a a; echo plain=$?
            KEYGATE_ASKPASS="$HOME/cancel" keygate get -s fp -a a; echo fp=$?
            """, askpass: false, extraEnvironment: env)
        fprint.settle()
        XCTAssertEqual(locked.values["copied"], "yes", locked.summary)
        XCTAssertNotEqual(locked.values["plain"], "0", locked.summary)
        XCTAssertNotEqual(locked.values["fp"], "0", locked.summary)
        XCTAssertFalse(locked.out.contains("plain\n") || locked.out.contains("s3cret"), locked.summary)
        XCTAssertEqual(locked.err.components(separatedBy: "Failed to match fingerprint").count - 1, 2,
                       "each read scanned the attacker's finger, and fprintd refused it: \(locked.summary)")
    }

    // MARK: Apple's fallbacks, flag by flag

    /// The variables of one run that chooses its fingers (serveFingerRequests): every read asks again.
    private func choosing(_ env: [String: String]) -> [String: String] {
        env.merging(["KEYGATE_TEST_REUSE_DURATION": "0"]) { _, new in new }
    }

    private static let promptCounter = #"count() { wc -l < "$HOME/prompts" | tr -d ' '; }"#

    /// userPresence, and a biometry flag `or` device-passcode: the enrolled finger and no password;
    /// after a wrong finger, the password; `and`: the password, then the finger; biometry-any
    /// alone: the finger only, never the password.
    func test_fallbacks_userPresenceAndBiometryOrPasscode_takeTheFinger_thenThePasswordAfterAWrongOne() throws {
        let (h, fprint, env) = try enrolledUser()
        fprint.serveFingerRequests(in: h.user.home)
        let r = try h.run("""
            \(FprintSession.fingerFunction)
            \(Self.promptCounter)
            printf %s up | keygate add -s up -a a --access user-presence; echo a1=$?
            printf %s or | keygate add -s or -a a --access biometry-current-set,device-passcode --or; echo a2=$?
            printf %s fp | keygate add -s fp -a a --access biometry-any; echo a3=$?
            printf %s and | keygate add -s and -a a --access biometry-any,device-passcode --and; echo a4=$?
            keygate unlock; echo p0=$(count)
            finger finger-a
            echo up1=$(keygate get -s up -a a)
            echo p1=$(count)
            echo or1=$(keygate get -s or -a a)
            echo p2=$(count)
            echo and1=$(keygate get -s and -a a)
            echo pand=$(count)
            finger finger-b
            echo up2=$(keygate get -s up -a a)
            echo p3=$(count)
            echo or2=$(keygate get -s or -a a)
            echo p4=$(count)
            keygate get -s fp -a a; echo fp=$?
            echo p5=$(count)
            finger none
            """, extraEnvironment: choosing(env), timeout: 240)
        let v = r.values
        XCTAssertEqual([v["a1"], v["a2"], v["a3"], v["a4"]], ["0", "0", "0", "0"], r.summary)
        let p = (0...5).map { Int(v["p\($0)"] ?? "") ?? -1 }
        XCTAssertEqual(v["up1"], "up", "user-presence takes the enrolled finger: \(r.summary)")
        XCTAssertEqual(p[1], p[0], "and asks no password: \(h.prompts())")
        XCTAssertEqual(v["or1"], "or", "biometry-current-set or device-passcode takes the finger: \(r.summary)")
        XCTAssertEqual(p[2], p[1], "and asks no password: \(h.prompts())")
        XCTAssertEqual(v["and1"], "and", "biometry-any and device-passcode: the password, then the finger: \(r.summary)")
        XCTAssertEqual(Int(v["pand"] ?? ""), p[2] + 1, h.prompts())
        let pAnd = Int(v["pand"] ?? "") ?? -1
        XCTAssertEqual(v["up2"], "up", "after a wrong finger, the password: \(r.summary)")
        XCTAssertEqual(p[3], pAnd + 1, h.prompts())
        XCTAssertEqual(v["or2"], "or", "after a wrong finger, the password (keygate-passcode): \(r.summary)")
        XCTAssertEqual(p[4], p[3] + 1, h.prompts())
        XCTAssertTrue(r.err.contains("use your password instead"), r.summary)
        XCTAssertEqual(v["fp"], "51", "biometry-any alone: a wrong finger is refused: \(r.summary)")
        XCTAssertEqual(p[5], p[4], "and the password is never asked for it: \(h.prompts())")
    }

    /// Apple's biometryLockout: five failed matches in a row, then fingers are refused without a
    /// scan; an item that takes the password asks for it at once, and that password ends the lockout.
    func test_biometryLockout_afterFiveFailedMatches_refusesFingers_untilAPasswordSucceeds() throws {
        let (h, fprint, env) = try enrolledUser()
        fprint.serveFingerRequests(in: h.user.home)
        let r = try h.run("""
            \(FprintSession.fingerFunction)
            \(Self.promptCounter)
            printf %s fp | keygate add -s fp -a a --access biometry-any
            printf %s up | keygate add -s up -a a --access user-presence
            keygate unlock
            finger finger-b
            for i in 1 2 3 4 5; do keygate get -s fp -a a 2>>"$HOME/wrong.err"; echo "wrong$i=$?"; done
            echo p0=$(count)
            finger finger-a
            start=$(date +%s)
            keygate get -s fp -a a 2>"$HOME/locked.err"; echo locked=$?
            echo lockedSeconds=$(( $(date +%s) - start ))
            echo up=$(keygate get -s up -a a)
            echo p1=$(count)
            echo after=$(keygate get -s fp -a a)
            echo p2=$(count)
            finger none
            echo "wrong: $(cat "$HOME/wrong.err")" >&2
            echo "locked: $(cat "$HOME/locked.err")" >&2
            """, extraEnvironment: choosing(env), timeout: 240)
        let v = r.values
        XCTAssertEqual((1...5).map { v["wrong\($0)"] }, Array(repeating: "51", count: 5), r.summary)
        XCTAssertTrue(r.err.contains("too many failed fingerprint matches"), "the fifth starts the lockout: \(r.summary)")
        XCTAssertEqual(v["locked"], "51", "the enrolled finger is refused now: \(r.summary)")
        XCTAssertTrue(r.err.contains("locked: ") && r.err.components(separatedBy: "locked: ")[1].contains("too many failed fingerprint matches"),
                      r.summary)
        XCTAssertLessThan(Int(v["lockedSeconds"] ?? "") ?? 99, 5, "refused without waiting for a scan: \(r.summary)")
        let p = (0...2).map { Int(v["p\($0)"] ?? "") ?? -1 }
        XCTAssertEqual(v["up"], "up", "user-presence asks for the password at once: \(r.summary)")
        XCTAssertEqual(p[1], p[0] + 1, h.prompts())
        XCTAssertEqual(v["after"], "fp", "the password ended the lockout: the finger opens again: \(r.summary)")
        XCTAssertEqual(p[2], p[1], h.prompts())
    }

    // MARK: A finger reopens a locked keychain

    /// As Touch ID unlocks an iPhone: after a password unlock, `keygate lock` and a matching finger
    /// reopen the keychain (and the finger serves the item too) with no password; a wrong finger
    /// leaves the password; `lock --all`, a reboot (root's state for the boot dropped), the end of
    /// the policy's window, the biometric lockout and a password change each leave only the password.
    func test_aFingerReopensTheLockedKeychain_untilLockAll_aReboot_theWindow_theLockout_orAPasswordChange() throws {
        let (h, fprint, env) = try enrolledUser()
        fprint.serveFingerRequests(in: h.user.home)
        let preamble = FprintSession.fingerFunction + "\n" + Self.promptCounter + "\n"
        let r = try h.run(preamble + """
            printf %s fp | keygate add -s fp -a a --access biometry-current-set
            printf %s plain | keygate add -s plain -a a --access none
            keygate unlock; echo p0=$(count)
            keygate lock
            finger finger-a
            echo fp1=$(keygate get -s fp -a a)
            echo p1=$(count)
            keygate lock
            echo plain1=$(keygate get -s plain -a a)
            echo p2=$(count)
            keygate lock
            finger finger-b
            echo plain2=$(keygate get -s plain -a a)
            echo p3=$(count)
            keygate lock --all
            finger finger-a
            echo plain3=$(keygate get -s plain -a a)
            echo p4=$(count)
            finger none
            """, extraEnvironment: choosing(env), timeout: 240)
        let v = r.values
        let p = (0...4).map { Int(v["p\($0)"] ?? "") ?? -1 }
        XCTAssertEqual(v["fp1"], "fp", "the finger reopened the keychain, and opened the item: \(r.summary)")
        XCTAssertEqual(p[1], p[0], "no password: \(h.prompts())")
        XCTAssertEqual(v["plain1"], "plain", r.summary)
        XCTAssertEqual(p[2], p[1], "no password for a plain item either: \(h.prompts())")
        XCTAssertEqual(v["plain2"], "plain", "after a wrong finger, the password: \(r.summary)")
        XCTAssertEqual(p[3], p[2] + 1, h.prompts())
        XCTAssertTrue(r.err.contains("did not reopen the keychain"), r.summary)
        XCTAssertEqual(v["plain3"], "plain", r.summary)
        XCTAssertEqual(p[4], p[3] + 1, "lock --all dropped what the finger needs: the password: \(h.prompts())")

        // A reboot: root's state for this boot (under /run) is gone.
        var info = stat()
        XCTAssertEqual(stat("/run/keygate/finger/\(h.user.uid)", &info), 0, "armed again by the last password")
        XCTAssertEqual(info.st_uid, 0, "root's")
        XCTAssertEqual(info.st_mode & 0o077, 0, "root's alone")
        XCTAssertEqual(unlink("/run/keygate/finger/\(h.user.uid)"), 0)
        // After `setup` (which counts the prompts as p0 and leaves the keychain locked), the enrolled
        // finger on the reader: the plain item still reads, through the password (one prompt more),
        // and stderr says why the finger did not reopen it.
        func fingerLeavesThePassword(after setup: String, _ why: String, saying: String?,
                                     environment: [String: String]) throws {
            let run = try h.run(preamble + setup + """

                finger finger-a
                echo plain=$(keygate get -s plain -a a)
                echo p1=$(count)
                finger none
                """, extraEnvironment: environment)
            XCTAssertEqual(run.values["plain"], "plain", run.summary)
            XCTAssertEqual(Int(run.values["p1"] ?? ""), (Int(run.values["p0"] ?? "") ?? -1) + 1, "\(why), the password: \(h.prompts())")
            if let saying { XCTAssertTrue(run.err.contains(saying), run.summary) }
        }
        try fingerLeavesThePassword(after: """
            echo p0=$(count)
            keygate lock
            """, "after a reboot", saying: "keeps nothing for it", environment: choosing(env))

        // The policy's window (2 s here) since the last password.
        try fingerLeavesThePassword(after: """
            keygate unlock; echo p0=$(count)
            keygate lock
            sleep 3
            """, "past the window", saying: "since the last password",
            environment: choosing(env).merging(["KEYGATE_TEST_FINGER_UNLOCK": "2"]) { _, new in new })

        // The biometric lockout drops it.
        try fingerLeavesThePassword(after: """
            keygate unlock
            finger finger-b
            for i in 1 2 3 4 5; do keygate get -s fp -a a >/dev/null 2>&1; done
            echo p0=$(count)
            keygate lock
            """, "after the lockout", saying: nil, environment: choosing(env))

        // A password change the keychain has not followed: the finger opens nothing.
        _ = try h.run("keygate unlock", extraEnvironment: env)
        try h.user.changePassword(to: "new-\(UUID().uuidString.prefix(10))")
        let changed = try h.run(preamble + """
            keygate lock
            finger finger-a
            keygate get -s plain -a a > "$HOME/out"; echo get=$?
            echo plain=$(cat "$HOME/out")
            finger none
            """, extraEnvironment: choosing(env))
        XCTAssertNotEqual(changed.values["get"], "0", changed.summary)
        XCTAssertNotEqual(changed.values["plain"], "plain", changed.summary)
        XCTAssertTrue(changed.err.contains("your password has changed since"), changed.summary)
    }

    /// The first finger, enrolled after the last password unlock: that unlock armed nothing (no
    /// finger then), so the finger cannot reopen the keychain. As on Apple, where the passcode opens
    /// a device Touch ID cannot: the password opens the keychain, with a word saying why, and the
    /// finger then opens the item, which never takes the password for itself. With no way to type
    /// (no terminal, no askpass) it is a clear error naming `keygate unlock`, never a bare authFailed.
    func test_aFirstFingerEnrolledAfterTheLastPasswordUnlock_thePasswordOpensTheKeychainSayingWhy_thenTheFingerTheItem() throws {
        try firstFinger(keychainStack: nil)
    }

    /// The same where the keychain's own service takes a finger first, as Debian's common-auth does
    /// with pam-auth-update's "Fingerprint authentication" on: a finger there types no password, so
    /// the keychain is opened through the password-only service (keygate-passcode) instead.
    func test_aFirstFinger_whereTheKeychainsServiceTakesAFingerFirst_thePasswordStillOpensTheKeychain() throws {
        try firstFinger(keychainStack: """
            auth [success=2 default=ignore] pam_fprintd.so max-tries=1 timeout=10
            auth [success=1 default=ignore] pam_unix.so nullok
            auth requisite pam_deny.so
            auth required pam_permit.so
            account required pam_unix.so

            """)
    }

    /// The first finger's steps; `keychainStack`: the `keygate` service's stack, else the harness's pam_unix.
    private func firstFinger(keychainStack: String?) throws {
        let fprint = try FprintSession()
        session = fprint
        let h = try CLIUserHarness()
        let stack = "auth required pam_fprintd.so max-tries=1 timeout=10\naccount required pam_unix.so\n"
        try stack.write(toFile: h.confdir + "/keygate-biometry", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.confdir + "/keygate-biometry")
        if let keychainStack {
            try keychainStack.write(toFile: h.confdir + "/keygate", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.confdir + "/keygate")
        }
        let env = fprint.gatekeeperEnvironment
        let made = try h.run(#"keygate init >/dev/null; echo init=$?; keygate status --json | grep -q '"unlocked" *: *true' && echo open=1"#,
                             extraEnvironment: env)
        XCTAssertEqual(made.values["init"], "0", made.summary)
        XCTAssertEqual(made.values["open"], "1", "unlocked with the password, no finger enrolled: \(made.summary)")

        try fprint.enroll(h.user.name, as: "finger-a")
        fprint.settle()
        let add = try h.run("""
            printf %s s3cret | keygate add -s fp -a a --access biometry-current-set; echo add=$?
            keygate lock; echo lock=$?
            """, extraEnvironment: env)
        XCTAssertEqual(add.values["add"], "0", add.summary)
        XCTAssertEqual(add.values["lock"], "0", add.summary)

        // No way to type: a clear error that says what to run, at once, with no scan.
        let started = Date()
        let mute = try h.run("keygate get -s fp -a a; echo get=$?", askpass: false, extraEnvironment: env)
        XCTAssertEqual(mute.values["get"], "36", "errSecInteractionNotAllowed, not authFailed: \(mute.summary)")
        XCTAssertTrue(mute.err.contains("keygate unlock"), mute.summary)
        XCTAssertTrue(mute.err.contains("only after you have typed your password once since enrolling it"), mute.summary)
        XCTAssertLessThan(Date().timeIntervalSince(started), 8, "no scan was waited for: \(mute.summary)")

        let asked = try h.promptCount()
        let read = try withRestingFinger(fprint) {
            try h.run("printf 'get=%s\\n' \"$(keygate get -s fp -a a)\"", extraEnvironment: env)
        }
        XCTAssertEqual(read.values["get"], "s3cret", "the password opened the keychain, the finger the item: \(read.summary)")
        XCTAssertEqual(try h.promptCount() - asked, 1, "one password, for the keychain: \(h.prompts())")
        XCTAssertTrue(read.err.contains("your finger can open the keychain only after you have typed your password once since enrolling it"),
                      read.summary)
        XCTAssertTrue(read.err.contains("finger"), "then the finger's prompt: \(read.summary)")

        // That password armed the finger: after `keygate lock` the finger alone reopens the keychain and opens the item.
        let again = try withRestingFinger(fprint) {
            try h.run("keygate lock; printf 'get=%s\\n' \"$(keygate get -s fp -a a)\"", extraEnvironment: env)
        }
        XCTAssertEqual(again.values["get"], "s3cret", again.summary)
        XCTAssertEqual(try h.promptCount() - asked, 1, "no password this time: \(h.prompts())")
        guard keychainStack != nil else { return }

        // A user-presence item on a keychain the finger cannot reopen (lock --all): the one prompt
        // that opens both takes the password; the keychain's service takes the finger first, so
        // the password-only service asks for it after, and the read opens with one password.
        _ = try h.run("printf %s up | keygate add -s up -a a --access user-presence; keygate lock --all", extraEnvironment: env)
        let before = try h.promptCount()
        let presence = try withRestingFinger(fprint) {
            try h.run("printf 'get=%s\\n' \"$(keygate get -s up -a a)\"", extraEnvironment: env)
        }
        XCTAssertEqual(presence.values["get"], "up", presence.summary)
        XCTAssertEqual(try h.promptCount() - before, 1, "one password: \(h.prompts())")
        XCTAssertTrue(presence.err.contains("without a typed password"), "it says why it asks: \(presence.summary)")
    }

    /// The closing note's figures: from the credential (the finger's scan; the askpass's
    /// answer) to the secret on stdout, for a biometry-any read and a password-gated
    /// (device-passcode: user-presence would take the finger now) read of the same keychain,
    /// side by side in one run.
    func test_figures_fromTheScanToTheSecret_againstAPasswordGatedRead() throws {
        let (h, fprint, env) = try enrolledUser()
        try h.writeUserFile("askpass", """
            #!/bin/sh
            echo prompt >> "$HOME/prompts"
            date +%s%N > "$HOME/answered"
            cat "$HOME/answer"
            """, mode: 0o700)
        _ = try h.run("""
            printf %s f | keygate add -s fp -a a --access biometry-any
            printf %s p | keygate add -s pw -a a --access device-passcode
            """, extraEnvironment: env)
        var finger: [Double] = [], password: [Double] = []
        let touchLog = NSTemporaryDirectory() + "kg-touch-\(UUID().uuidString.prefix(6))"
        for _ in 0..<5 {
            try? FileManager.default.removeItem(atPath: touchLog)
            // The finger rests on the reader; each scan's time goes to touchLog.
            fprint.touch("finger-a", stamps: touchLog)
            let f = try h.run("""
                keygate unlock >/dev/null; echo start=$(date +%s%N); keygate get -s fp -a a >/dev/null; echo end=$(date +%s%N)
                """, extraEnvironment: env)
            fprint.settle()
            let p = try h.run("keygate unlock >/dev/null; keygate get -s pw -a a >/dev/null; echo end=$(date +%s%N)",
                              extraEnvironment: env)
            let answered = Double((try? String(contentsOfFile: h.user.home + "/answered", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? 0
            // The scan that matched: the last one before the secret came out.
            let scans = ((try? String(contentsOfFile: touchLog, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Double($0) }
            // The finger scans once after each verification starts, never before the read's start.
            if let end = Double(f.values["end"] ?? ""), let started = Double(f.values["start"] ?? ""),
               let scanned = scans.filter({ $0 <= end }).max() {
                finger.append((end - max(scanned, started)) / 1e6)
            }
            if let end = Double(p.values["end"] ?? ""), answered > 0 { password.append((end - answered) / 1e6) }
        }
        try? FileManager.default.removeItem(atPath: touchLog)
        XCTAssertEqual(finger.count, 5, "every finger read was timed")
        XCTAssertEqual(password.count, 5, "every password read was timed")
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        print("FIGURES fingerprint scan->secret ms: \(finger.map { Int($0) }) median \(Int(median(finger)))")
        print("FIGURES password answer->secret ms: \(password.map { Int($0) }) median \(Int(median(password)))")
    }
}
