// Access control end to end, with the real binary as a real user: PAM through real
// pam_unix, the real kernel keyring for reuse windows, real gnome-keyring. The
// askpass program counts prompts, so each test can say exactly when keygate asked.
import Foundation
import KeygateTestSupport
import XCTest

final class AccessControlCLITests: XCTestCase {
    /// A presence check says what it is for and names the item, as a Mac does; a real unlock
    /// keeps "unlock the keychain".
    func test_presencePrompt_namesTheItem_andTheUnlockPromptSaysUnlock() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s b4nk | keygate add -s bank -a alice --access user-presence; echo add=$?
            keygate lock --all
            : > "$HOME/prompt-texts"
            keygate get -s bank -a alice >/dev/null; echo get=$?
            keygate lock --all
            keygate unlock; echo unlock=$?
            cat "$HOME/prompt-texts"
            """)
        XCTAssertEqual(r.values["get"], "0", r.summary)
        XCTAssertEqual(r.values["unlock"], "0", r.summary)
        let texts = h.prompts()
        XCTAssertTrue(texts.contains("[keygate] keygate wants to use your confidential information stored in \"bank\" in your keychain."),
                      texts)
        XCTAssertTrue(texts.contains("[keygate] unlock the keychain"), texts)
        XCTAssertEqual(texts.components(separatedBy: "confidential information").count, 2, "one presence prompt: \(texts)")
    }

    func test_userPresence_addNeverPrompts_readPrompts_reuseWindow_andLock() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            keygate init >/dev/null; echo init=$?
            echo n0=$(wc -l < "$HOME/prompts")
            keygate lock
            printf %s gated | keygate add -s svc -a a --access user-presence; echo add=$?
            keygate list -s svc | grep access
            echo n1=$(wc -l < "$HOME/prompts")
            printf 'v1=%s\\n' "$(keygate get -s svc -a a)"
            echo n2=$(wc -l < "$HOME/prompts")
            printf 'v2=%s\\n' "$(keygate get -s svc -a a)"
            echo n3=$(wc -l < "$HOME/prompts")
            keygate lock
            printf 'v3=%s\\n' "$(keygate get -s svc -a a)"
            echo n4=$(wc -l < "$HOME/prompts")
            """)
        let v = r.values
        XCTAssertEqual(v["init"], "0", r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertTrue(r.out.contains("access: user-presence"), "list shows the flag: \(r.summary)")
        XCTAssertEqual(v["n1"], v["n0"], "adding a gated item to a locked keychain does not prompt")
        XCTAssertEqual([v["v1"], v["v2"], v["v3"]], ["gated", "gated", "gated"], r.summary)
        XCTAssertEqual(v["n2"], "2", "the first read prompts")
        XCTAssertEqual(v["n3"], "2", "inside the reuse window it does not")
        XCTAssertEqual(v["n4"], "3", "after lock it prompts again")
    }

    func test_userPresence_otherScope_expiry_andZeroDuration_prompt() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1
            keygate get -s svc -a a >/dev/null; echo n1=$(wc -l < "$HOME/prompts")
            authenticated=$(cut -d. -f1 /proc/uptime)
            bash -c 'keygate get -s svc -a a >/dev/null'; echo n2=$(wc -l < "$HOME/prompts")
            keygate get -s svc -a a >/dev/null; echo n3=$(wc -l < "$HOME/prompts")
            # The gatekeeper keeps whole seconds of CLOCK_BOOTTIME (/proc/uptime) and reuses while
            # now - time <= 2: the window has passed once that clock reads 3 s past the second the
            # first read finished in. Wait for that, not a fixed time.
            while [ "$(cut -d. -f1 /proc/uptime)" -lt $((authenticated + 3)) ]; do sleep 0.05; done
            keygate get -s svc -a a >/dev/null; echo n4=$(wc -l < "$HOME/prompts")
            KEYGATE_TEST_REUSE_DURATION=0 keygate get -s svc -a a >/dev/null
            KEYGATE_TEST_REUSE_DURATION=0 keygate get -s svc -a a >/dev/null; echo n5=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_REUSE_DURATION": "2", "KEYGATE_TEST_REUSE_SCOPE": "ppid"])
        let v = r.values
        // n1: init at add (1) + first read (2).
        XCTAssertEqual(v["n1"], "2", r.summary)
        XCTAssertEqual(v["n2"], "3", "another scope (another parent process) prompts")
        XCTAssertEqual(v["n3"], "3", "this scope is still inside its window")
        XCTAssertEqual(v["n4"], "4", "after the 2 s window expired it prompts")
        XCTAssertEqual(v["n5"], "6", "reuse duration 0: every read prompts")
    }

    func test_ttyScope_sameTerminalReuses_anotherTerminalPrompts() throws {
        let h = try CLIUserHarness(sharedUser: true)
        // Each `script` run is a new terminal and session; two reads inside one share it.
        let r = try h.run("""
            printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1
            echo n0=$(wc -l < "$HOME/prompts")
            script -qec 'keygate get -s svc -a a > "$HOME/v1"; keygate get -s svc -a a > "$HOME/v2"' /dev/null >/dev/null
            echo n1=$(wc -l < "$HOME/prompts")
            script -qec 'keygate get -s svc -a a > "$HOME/v3"' /dev/null >/dev/null
            echo n2=$(wc -l < "$HOME/prompts")
            echo v=$(cat "$HOME/v1")$(cat "$HOME/v2")$(cat "$HOME/v3")
            """, extraEnvironment: ["KEYGATE_ASKPASS_REQUIRE": "force", "KEYGATE_TEST_REUSE_SCOPE": "tty"])
        let v = r.values
        XCTAssertEqual(v["n0"], "1", r.summary)
        XCTAssertEqual(v["n1"], "2", "two reads on one terminal: one prompt: \(r.summary)")
        XCTAssertEqual(v["n2"], "3", "another terminal prompts again: \(r.summary)")
        XCTAssertEqual(v["v"], "ggg", r.summary)
    }

    func test_biometryAny_withNoFprintd_isAClearErrorAtOnce_neverThePassword() throws {
        // No fprintd here (its system bus is absent): the finger cannot be asked, and the password
        // is no substitute (FingerprintPresenceTests reads with a real fprintd and a virtual finger).
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s bio | keygate add -s svc -a a --access biometry-any; echo add=$?
            keygate unlock >/dev/null
            echo n0=$(wc -l < "$HOME/prompts")
            start=$(date +%s); keygate get -s svc -a a; echo get=$?; echo took=$(( $(date +%s) - start ))
            echo n1=$(wc -l < "$HOME/prompts")
            keygate list -s svc | grep access
            """, extraEnvironment: ["KEYGATE_TEST_SYSTEM_BUS": "unix:path=/nonexistent/keygate-test-bus"])
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["get"], "53", "errSecNotAvailable: \(r.summary)")
        XCTAssertTrue(r.err.contains("fprintd"), r.summary)
        XCTAssertFalse(r.out.contains("bio\n"), r.summary)
        XCTAssertEqual(v["n0"], v["n1"], "the password is never asked for a finger-only item: \(r.summary)")
        XCTAssertLessThanOrEqual(Int(v["took"] ?? "") ?? 99, 10, r.summary)
        XCTAssertTrue(r.out.contains("access: biometry-any"), r.summary)
    }

    func test_thisDeviceOnly_opensThroughTheGatekeeper_andTheDeviceKeyNeverReachesTheUser() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let hostKeys = try HostKeyFolder()
        let here = try hostKeys.make("here")
        let r = try h.run("""
            printf %s x | keygate add -s svc -a a --accessible when-unlocked-this-device-only; echo add=$?
            printf 'get=%s\\n' "$(keygate get -s svc -a a)"
            keyctl rdescribe @u >/dev/null 2>&1; for id in $(keyctl rlist @u 2>/dev/null); do keyctl rdescribe $id | sed 's/^/key=/'; done
            """, extraEnvironment: ["KEYGATE_TEST_HOST_KEY": here])
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["get"], "x", r.summary)
        XCTAssertFalse(r.out.contains(";device"), "no device key in the user's keyring: \(r.summary)")
        // The same data folder on a host with another host key: the device slot does not open.
        let other = try hostKeys.make("there")
        let elsewhere = try h.run("keygate get -s svc -a a; echo get=$?", extraEnvironment: ["KEYGATE_TEST_HOST_KEY": other])
        XCTAssertEqual(elsewhere.values["get"], "44", elsewhere.summary)
        XCTAssertTrue(elsewhere.err.contains("this-device-only"), elsewhere.summary)
        XCTAssertFalse(elsewhere.out.contains("x\n"), elsewhere.summary)
    }

    func test_invalidCombinations_exit206_withReasons() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s s -a 1 --access user-presence,current-set; echo up=$?
            printf %s x | keygate add -s s -a 2 --access device-passcode,current-set --or --and; echo andor=$?
            printf %s x | keygate add -s s -a 3 --access biometry-any,biometry-current-set; echo bio=$?
            printf %s x | keygate add -s s -a 4 --access fingerprint; echo unknown=$?
            printf %s x | keygate add -s s -a 5 --access device-passcode,current-set --or; echo ok=$?
            keygate list -s s | grep access
            """)
        r.assertValues(["up": "206", "andor": "206", "bio": "206", "unknown": "206", "ok": "0"])
        XCTAssertTrue(r.err.lowercased().contains("user-presence") || r.err.lowercased().contains("userpresence"), r.summary)
        XCTAssertTrue(r.out.contains("access: device-passcode,current-set;or"), r.summary)
    }

    func test_wrongPassword_forGatedRead_exits51() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s g | keygate add -s svc -a a --access device-passcode")
        try h.answerWith("wrong-password")
        let r = try h.run("keygate lock; keygate get -s svc -a a; echo get=$?")
        XCTAssertEqual(r.values["get"], "51", r.summary)
    }

    func test_masterKeyAlone_doesNotOpenAPresenceItem() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s plain | keygate add -s p -a a
            printf %s gated | keygate add -s g -a a --access user-presence
            keygate lock; keygate unlock; echo unlock=$?
            # Unlocked (master key cached) but no way to prompt: the plain item reads,
            # the presence item cannot, because its key is wrapped by the password only.
            KEYGATE_ASKPASS= keygate get -s p -a a >/dev/null; echo plain=$?
            KEYGATE_ASKPASS= keygate get -s g -a a >/dev/null; echo gated=$?
            """)
        r.assertValues(["unlock": "0", "plain": "0", "gated": "36"])
    }

    func test_currentSet_diesAfterPasswordChange_whileUserPresenceSurvivesKeygatePasswd() throws {
        let h = try CLIUserHarness()
        let setup = try h.run("""
            printf %s cs | keygate add -s svc -a cs --access current-set; echo a1=$?
            printf %s up | keygate add -s svc -a up --access user-presence; echo a2=$?
            printf %s plain | keygate add -s svc -a plain; echo a3=$?
            # More gated items than list keeps checks in flight (GateAccess.checksInFlight), mixed,
            # so that each answer must reach its own item.
            for i in 1 2 3 4 5 6 7 8 9; do
                printf %s cs | keygate add -s svc -a cs$i --access current-set || echo failed=cs$i
                printf %s up | keygate add -s svc -a up$i --access user-presence || echo failed=up$i
            done
            printf 'cs=%s\\n' "$(keygate get -s svc -a cs)"
            """)
        XCTAssertNil(setup.values["failed"], setup.summary)
        XCTAssertEqual(setup.values["cs"], "cs", setup.summary)
        let old = h.user.password
        let new = "new-\(UUID().uuidString.prefix(12))"
        try h.user.changePassword(to: new)       // chpasswd: outside Keygate
        try h.answerWith(new)
        let after = try h.run("""
            keygate lock --all
            keygate get -s svc -a cs; echo cs=$?
            keygate get -s svc -a up; echo up=$?
            """)
        XCTAssertEqual(after.values["cs"], "44", after.summary)
        XCTAssertTrue(after.err.contains("invalidated"), after.summary)
        XCTAssertEqual(after.values["up"], "51", "the old protector needs keygate passwd: \(after.summary)")
        XCTAssertTrue(after.err.contains("keygate passwd"), after.summary)
        try h.queueAnswers([new, old])            // PAM: current password; then the previous one
        let fixed = try h.run("""
            keygate passwd; echo passwd=$?
            keygate lock --all
            printf 'up=%s\\n' "$(keygate get -s svc -a up)"
            printf 'plain=%s\\n' "$(keygate get -s svc -a plain)"
            keygate get -s svc -a cs; echo cs=$?
            keygate exists -s svc -a cs; echo exists=$?
            keygate list -s svc | grep -c '^    invalidated: ' | sed 's/^/marked=/'
            keygate list -s svc --json | sed 's/^/json=/'
            """)
        let v = fixed.values
        XCTAssertEqual(v["passwd"], "0", fixed.summary)
        XCTAssertEqual(v["up"], "up", "user-presence survives keygate passwd: \(fixed.summary)")
        XCTAssertEqual(v["plain"], "plain", fixed.summary)
        XCTAssertEqual(v["cs"], "44", "current-set never comes back: \(fixed.summary)")
        XCTAssertTrue(fixed.err.contains("was invalidated: it was bound to your previous password (current-set)"), fixed.summary)
        XCTAssertEqual(v["exists"], "0", "an invalidated item still exists (keygate exists documents it): \(fixed.summary)")
        XCTAssertEqual(v["marked"], "10", "list marks the ten current-set items: \(fixed.summary)")
        let listed = try XCTUnwrap(JSONSerialization.jsonObject(with: Data((v["json"] ?? "").utf8)) as? [[String: Any]], fixed.summary)
        let reasons = Dictionary(uniqueKeysWithValues: listed.map { ($0["account"] as? String ?? "?", $0["invalidated"] as? String ?? "none") })
        XCTAssertEqual(reasons.count, 21, "\(reasons)")
        for suffix in [""] + (1...9).map(String.init) {
            XCTAssertTrue(reasons["cs" + suffix]?.contains("current-set") ?? false, "cs\(suffix): \(reasons)")
            XCTAssertEqual(reasons["up" + suffix], "none", "up\(suffix): \(reasons)")
        }
        XCTAssertEqual(reasons["plain"], "none", "\(reasons)")
    }

    func test_rootReset_thenRecovery_everyPresenceItemStillReads_andOnlyCurrentSetIsLost() throws {
        let h = try CLIUserHarness()
        let setup = try h.run("""
            keygate init > "$HOME/recovery"
            printf %s up | keygate add -s svc -a up --access user-presence; echo a1=$?
            printf %s up2 | keygate add -s svc -a up2 --access user-presence; echo a2=$?
            printf %s cs | keygate add -s svc -a cs --access current-set; echo a3=$?
            printf %s plain | keygate add -s svc -a plain; echo a4=$?
            """)
        XCTAssertEqual(setup.values["a1"], "0", setup.summary)
        XCTAssertEqual(setup.values["a3"], "0", setup.summary)
        let recovery = try String(contentsOfFile: h.user.home + "/recovery", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let new = "reset-\(UUID().uuidString.prefix(12))"
        try h.user.changePassword(to: new)       // a root reset: chpasswd, the old password is lost
        try h.answerWith(new)
        try h.queueAnswers([recovery, new])      // the recovery key; then PAM: the current password
        let r = try h.run("""
            keygate lock --all
            keygate passwd --recovery; echo passwd=$?
            keygate lock --all
            printf 'plain=%s\\n' "$(keygate get -s svc -a plain)"
            printf 'up=%s\\n' "$(keygate get -s svc -a up)"
            printf 'up2=%s\\n' "$(keygate get -s svc -a up2)"
            keygate get -s svc -a cs; echo cs=$?
            keygate list -s svc -a cs | sed -n 's/^    invalidated: /why=/p'
            """)
        XCTAssertEqual(r.values["passwd"], "0", "nothing left to lose, so nothing to confirm: \(r.summary)")
        XCTAssertEqual(r.values["plain"], "plain", "the new password opens the keychain: \(r.summary)")
        XCTAssertEqual(r.values["up"], "up", "presence is the gatekeeper's PAM decision, not the old password's: \(r.summary)")
        XCTAssertEqual(r.values["up2"], "up2", r.summary)
        XCTAssertEqual(r.values["cs"], "44", "current-set died with the password change: \(r.summary)")
        XCTAssertTrue(r.values["why"]?.contains("current-set") ?? false, "list says why: \(r.summary)")
    }

    func test_lockout_afterFiveFailures_refusesWithoutPrompting() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s g | keygate add -s svc -a a --access user-presence")
        try h.answerWith("wrong")
        let r = try h.run("""
            keygate lock
            keygate get -s svc -a a; echo g1=$?
            keygate get -s svc -a a; echo g2=$?
            echo n=$(wc -l < "$HOME/prompts")
            keygate get -s svc -a a; echo g3=$?
            echo m=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_LOCKOUT_SECONDS": "60"], timeout: 180)
        let v = r.values
        XCTAssertEqual(v["g1"], "51", r.summary)
        XCTAssertEqual(v["g2"], "51", r.summary)
        XCTAssertEqual(v["n"], "6", "1 (init) + 3 + 2: the fifth failure starts the lockout: \(r.summary)")
        XCTAssertEqual(v["g3"], "51", r.summary)
        XCTAssertEqual(v["m"], v["n"], "locked out: no prompt at all")
        XCTAssertTrue(r.err.contains("seconds"), "the message gives the time left: \(r.summary)")
    }
}
