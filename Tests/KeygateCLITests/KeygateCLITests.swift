// End-to-end tests of the real `keygate` binary, run as a real non-root user
// through real pam_unix, a real gnome-keyring on a private D-Bus session and the
// real kernel keyring. Each script prints `name=value` lines that the test reads.
import Foundation
import KeygateTestSupport
import XCTest

final class KeygateCLITests: XCTestCase {
    /// For tests about the Secret Service itself (missing, stopped, locked): pinned, so that
    /// neither `auto` nor the suite's embedded pass (KEYGATE_STORE=embedded) picks another store.
    private let secretServiceOnly = ["KEYGATE_STORE": "secret-service"]

    func test_add_thenGet_afterLock_unlocksThroughPAM_andReturnsExactSecret() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'correct horse battery' | keygate add -s demo -a alice; echo add=$?
            keygate lock; echo lock=$?
            keygate get -s demo -a alice > "$HOME/out"; echo get=$?
            printf 'got=%s\\n' "$(cat "$HOME/out")"
            echo bytes=$(wc -c < "$HOME/out")
            """)
        let v = r.values
        r.assertValues(["add": "0", "get": "0", "got": "correct horse battery"])
        XCTAssertEqual(v["bytes"], "21", "no newline is added when stdout is not a terminal")
        // One prompt for the implicit init at the first add, one after the lock.
        XCTAssertEqual(try h.promptCount(), 2, h.prompts())
        XCTAssertTrue(r.err.contains("Recovery key"), "the first add shows the recovery key once: \(r.err)")
    }

    func test_get_withinLockAfter_doesNotPrompt_andPromptsAgainAfterLock() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s1 | keygate add -s svc -a a; echo add=$?
            keygate get -s svc -a a >/dev/null; echo get1=$?
            echo n1=$(wc -l < "$HOME/prompts")
            keygate lock
            keygate get -s svc -a a >/dev/null; echo get2=$?
            echo n2=$(wc -l < "$HOME/prompts")
            keygate get -s svc -a a >/dev/null; echo get3=$?
            echo n3=$(wc -l < "$HOME/prompts")
            """)
        let v = r.values
        XCTAssertEqual([v["add"], v["get1"], v["get2"], v["get3"]], ["0", "0", "0", "0"], r.summary)
        XCTAssertEqual(v["n1"], "1", "the read right after the add uses the cached key")
        XCTAssertEqual(v["n2"], "2", "after lock the next read prompts")
        XCTAssertEqual(v["n3"], "2", "and the one after that is cached again")
    }

    func test_lockAfterTimeout_expires_andTheNextReadPrompts() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s1 | keygate add -s svc -a a; echo add=$?
            keygate status | grep '^state:'
            # The kernel expires the cached key at a whole-second boundary, 1 to 2 s from the add:
            # poll for that (10 s at most) rather than sleep past it.
            for _ in $(seq 200); do keygate status | grep -q '^state: locked' && break; sleep 0.05; done
            keygate status | grep '^state:'
            keygate get -s svc -a a >/dev/null; echo get=$?
            echo n=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_LOCK_AFTER": "2"])
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertTrue(r.out.contains("state: unlocked"), r.summary)
        XCTAssertTrue(r.out.contains("state: locked"), "the kernel timeout locked it: \(r.summary)")
        XCTAssertEqual(v["get"], "0", r.summary)
        XCTAssertEqual(v["n"], "2", "the read after expiry prompted")
    }

    func test_wrongPassword_threeTries_thenExit51() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s s1 | keygate add -s svc -a a")
        XCTAssertEqual(try h.promptCount(), 1)
        try h.answerWith("not-the-password")
        let r = try h.run("keygate lock; keygate get -s svc -a a; echo get=$?")
        XCTAssertEqual(r.values["get"], "51", r.summary)
        XCTAssertEqual(try h.promptCount(), 4, "three tries, like sudo: \(h.prompts())")
        XCTAssertTrue(r.err.contains("incorrect password"), r.summary)
    }

    func test_noTerminal_noAskpass_exits36_atOnce() throws {
        let h = try CLIUserHarness(sharedUser: true)
        _ = try h.run("printf %s s1 | keygate add -s svc -a a")
        let start = Date()
        let r = try h.run("keygate lock; keygate get -s svc -a a; echo get=$?", askpass: false)
        XCTAssertEqual(r.values["get"], "36", r.summary)
        XCTAssertTrue(r.err.contains("KEYGATE_ASKPASS"), "the message says what to do: \(r.err)")
        XCTAssertLessThan(Date().timeIntervalSince(start), 10, "it fails at once, without waiting for PAM")
        XCTAssertEqual(try h.promptCount(), 1, "no prompt was attempted")
    }

    func test_duplicate_exits45_andUpdateReplaces() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s one | keygate add -s svc -a a; echo add1=$?
            printf %s two | keygate add -s svc -a a; echo add2=$?
            printf 'v1=%s\\n' "$(keygate get -s svc -a a)"
            printf %s three | keygate add -U -s svc -a a; echo add3=$?
            printf 'v2=%s\\n' "$(keygate get -s svc -a a)"
            keygate list -s svc --json; echo
            """)
        r.assertValues(["add1": "0", "add2": "45", "v1": "one", "add3": "0", "v2": "three"])
        XCTAssertEqual(r.out.components(separatedBy: "\"account\":\"a\"").count - 1, 1, "still one item: \(r.out)")
    }

    /// As macOS's `add-generic-password -U`: the label and comment an update does not give stay;
    /// the ones it gives replace them.
    func test_update_keepsLabelAndComment_unlessGiven() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s one | keygate add -s keep -a a -l 'Work VPN' -j 'rotated monthly'; echo add=$?
            printf %s two | keygate add -U -s keep -a a; echo update=$?
            printf 'kept=%s\\n' "$(keygate list -s keep --json)"
            printf %s three | keygate add -U -s keep -a a -l 'Home VPN'; echo relabel=$?
            printf 'relabeled=%s\\n' "$(keygate list -s keep --json)"
            printf 'v=%s\\n' "$(keygate get -s keep -a a)"
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["update"], "0", r.summary)
        XCTAssertTrue(v["kept"]?.contains("\"label\":\"Work VPN\"") ?? false, r.summary)
        XCTAssertTrue(v["kept"]?.contains("rotated monthly") ?? false, r.summary)
        XCTAssertEqual(v["relabel"], "0", r.summary)
        XCTAssertTrue(v["relabeled"]?.contains("\"label\":\"Home VPN\"") ?? false, r.summary)
        XCTAssertTrue(v["relabeled"]?.contains("rotated monthly") ?? false, r.summary)
        XCTAssertEqual(v["v"], "three", r.summary)
    }

    func test_notFound_exits44_forGetExistsAndDelete() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s svc -a present; echo add=$?
            keygate get -s svc -a missing; echo get=$?
            keygate exists -s svc -a missing; echo exists=$?
            keygate exists -s svc -a present; echo present=$?
            keygate delete -s svc -a missing; echo delete=$?
            """)
        r.assertValues(["add": "0", "get": "44", "exists": "44", "present": "0", "delete": "44"])
    }

    func test_noSecretService_exits53_withAdvice() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent/bus keygate list; echo nobus=$?
            dbus-run-session -- keygate list; echo nokeyring=$?
            """, extraEnvironment: secretServiceOnly)
        let v = r.values
        XCTAssertEqual(v["nobus"], "53", r.summary)
        XCTAssertEqual(v["nokeyring"], "53", r.summary)
        XCTAssertTrue(r.err.contains("secret-session"), "the message says what to start: \(r.err)")
    }

    func test_unresponsiveDaemon_exits53_withinTheDeadline() throws {
        // An account of its own: it finds the user's daemon by uid, and a shared uid may carry the
        // unreaped (zombie) processes of earlier tests.
        let h = try CLIUserHarness()
        let r = try h.run("""
            pid=$(pgrep -u "$(id -u)" -x gnome-keyring-d | head -n1)
            echo daemon=$pid
            kill -STOP "$pid"
            start=$(date +%s)
            keygate list; echo list=$?
            echo took=$(( $(date +%s) - start ))
            kill -CONT "$pid"
            """, extraEnvironment: secretServiceOnly.merging(["KEYGATE_TEST_STORE_DEADLINE": "2"]) { _, new in new })
        let v = r.values
        XCTAssertFalse((v["daemon"] ?? "").isEmpty, "found the daemon to stop: \(r.summary)")
        XCTAssertEqual(v["list"], "53", r.summary)
        XCTAssertLessThanOrEqual(Int(v["took"] ?? "99") ?? 99, 4, r.summary)
        XCTAssertTrue(r.err.contains("did not answer"), r.summary)
    }

    func test_lockedCollection_isNotReportedAsNotFound() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s svc -a a; echo add=$?
            gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \\
              --method org.freedesktop.Secret.Service.Lock "['/org/freedesktop/secrets/aliases/default']" >/dev/null
            keygate get -s svc -a a; echo get=$?
            keygate exists -s svc -a a; echo exists=$?
            """,
            // A keyring with a password: an unencrypted one stays readable after Lock.
            extraEnvironment: secretServiceOnly.merging(["SECRET_SESSION_PASSWORD_FD": "0"]) { _, new in new },
            stdin: Data("keyring-pw\n".utf8))
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["get"], "36", "a locked collection is not 'not found': \(r.summary)")
        XCTAssertEqual(v["exists"], "36", r.summary)
        // Not add's statement of the item's access ("… while the keychain is unlocked"): the refusal's own words.
        let refusals = r.err.split(separator: "\n").filter { !$0.hasPrefix("keygate: stored ") }.joined(separator: "\n")
        XCTAssertTrue(refusals.contains("locked"), r.summary)
    }

    /// A locked collection that needs no password (an unencrypted keyring, as gnome-keyring
    /// brings one back after a restart) opens as secret-tool opens it, even with the unlock
    /// prompt turned off: Service.Unlock answers at once, no window. The password-protected
    /// case stays exit 36 (test_lockedCollection_isNotReportedAsNotFound).
    func test_lockedUnencryptedCollection_opensWithoutAWindow_evenWithThePromptOff() throws {
        let h = try CLIUserHarness()
        let r = try h.run("""
            printf %s x | keygate add -s svc -a a; echo add=$?
            collection=/org/freedesktop/secrets/collection/login
            gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \\
              --method org.freedesktop.Secret.Service.Lock "['$collection']" >/dev/null
            locked() { gdbus call --session --dest org.freedesktop.secrets --object-path $collection \\
              --method org.freedesktop.DBus.Properties.Get org.freedesktop.Secret.Collection Locked; }
            echo before="$(locked)"
            echo value=$(KEYGATE_UNLOCK_PROMPT=never keygate get -s svc -a a); echo get=$?
            echo after="$(locked)"
            """, extraEnvironment: secretServiceOnly)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["before"], "(<true>,)", "the Lock took: \(r.summary)")
        XCTAssertEqual(v["value"], "x", r.summary)
        XCTAssertEqual(v["after"], "(<false>,)", r.summary)
    }

    /// gnome-keyring, started again by the bus after a crash, can answer ReadAlias("default")
    /// with "/" until it has read its keyrings; Keygate asks again for 170 ms, on a new
    /// connection (gnome-keyring reads keyrings/default again for each new client). Here the
    /// alias file names no collection for 50 ms, then the real one again; and, as the
    /// control, for good: exit 53 saying so, after the retries.
    func test_noDefaultCollectionForAMoment_isAskedAgain_andForGoodIsExit53() throws {
        let h = try CLIUserHarness()
        let r = try h.run("""
            printf %s x | keygate add -s svc -a a; echo add=$?
            alias="$HOME/.local/share/keyrings/default"
            echo was=$(cat "$alias")
            printf nowhere > "$alias"
            ( sleep 0.05; printf login > "$alias" ) &
            keygate list -s svc >/dev/null; echo moment=$?
            wait
            printf nowhere > "$alias"
            start=$(date +%s%N)
            keygate list -s svc 2>"$HOME/err"; echo forGood=$?
            echo tookMs=$(( ($(date +%s%N) - start) / 1000000 ))
            echo message=$(grep -c "has no default collection" "$HOME/err")
            printf login > "$alias"
            """, extraEnvironment: secretServiceOnly)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["was"], "login", "the test's keyring layout: \(r.summary)")
        XCTAssertEqual(v["moment"], "0", "a default collection gone for 50 ms: \(r.summary)")
        XCTAssertEqual(v["forGood"], "53", r.summary)
        XCTAssertEqual(v["message"], "1", r.summary)
        XCTAssertGreaterThanOrEqual(Int(v["tookMs"] ?? "0") ?? 0, 170, "asked again before giving up: \(r.summary)")
    }

    func test_storedBlob_containsNoPlaintext() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let canary = "CANARY-\(UUID().uuidString)"
        let r = try h.run("""
            printf %s '\(canary)' | keygate add -s svc -a a -l mylabel; echo add=$?
            secret-tool search --all xdg:schema io.keygate.Item 2>&1
            """, extraEnvironment: secretServiceOnly)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertTrue(r.out.contains("attribute.account = a"), "the search did find the item: \(r.summary)")
        XCTAssertFalse(r.out.contains(canary), "no plaintext reaches the Secret Service")
        XCTAssertFalse(r.out.contains(String(canary.dropFirst(7).prefix(8))), "not even a piece of it")
    }

    func test_binarySecret_roundTripsExactly() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf '\\000\\001\\377 a\\nb\\n\\000' > "$HOME/in"
            keygate add -s bin -a a < "$HOME/in"; echo add=$?
            keygate get -s bin -a a > "$HOME/out"; echo get=$?
            cmp "$HOME/in" "$HOME/out"; echo same=$?
            """)
        r.assertValues(["add": "0", "get": "0", "same": "0"])
    }

    func test_secretOnCommandLine_isRefused_andNothingStored_butMacOSsDashWValue_isTakenWithAWarning() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            keygate add -s svc -a a hunter2 </dev/null; echo add=$?
            keygate exists -s svc -a a; echo exists=$?
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "2", r.summary)
        XCTAssertTrue(r.err.contains("secrets are never taken from arguments"), "the refusal says why: \(r.err)")
        XCTAssertFalse(r.err.contains("hunter2"), "the refused secret is not echoed")
        XCTAssertEqual(v["exists"], "44", r.summary)
        // As macOS does, `-w VALUE` stores VALUE, and says who can see it.
        let w = try h.run("""
            keygate add-generic-password -s svc -a a -w 'hunter2 x' </dev/null; echo add=$?
            printf 'get=%s\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(w.values["add"], "0", w.summary)
        XCTAssertEqual(w.values["get"], "hunter2 x", w.summary)
        XCTAssertTrue(w.err.contains("""
            keygate: warning: the secret was given on the command line: other users of this host can read it in /proc/PID/cmdline \
            while keygate runs, and your shell may keep it in its history; pipe it on standard input (printf %s "$SECRET" | \
            keygate add …) or put -w last to be prompted\n
            """), w.summary)
        XCTAssertFalse(w.err.contains("hunter2"), "the secret is not echoed: \(w.summary)")
    }

    func test_macOSSpellings_workLikeTheKeygateVerbs() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s pw | keygate add-generic-password -s mail -a bob -l 'Mail' -j 'a comment'; echo add=$?
            printf 'w=%s\\n' "$(keygate find-generic-password -s mail -a bob -w)"
            keygate find-generic-password -s mail -a bob
            printf %s ipw | keygate add-internet-password -s example.com -a carol -r https -P 8443 -p /login; echo addi=$?
            printf 'wi=%s\\n' "$(keygate find-internet-password -s example.com -a carol -r https -P 8443 -p /login -w)"
            keygate delete-internet-password -s example.com -a carol -r https -P 8443 -p /login; echo deli=$?
            keygate delete-generic-password -s mail -a bob; echo del=$?
            keygate list --json
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["w"], "pw", r.summary)
        XCTAssertTrue(r.out.contains("    0x00000007 <blob>=\"Mail\"\n"), "macOS shows the label as 0x00000007: \(r.summary)")
        XCTAssertTrue(r.out.contains("    \"icmt\"<blob>=\"a comment\"\n"), r.summary)
        r.assertValues(["addi": "0", "wi": "ipw", "deli": "0", "del": "0"])
        XCTAssertTrue(r.out.hasSuffix("[]\n"), "everything was deleted: \(r.summary)")
    }

    func test_deleteWithoutAccount_needsAll() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            for a in a b c; do printf %s x | keygate add -s svc -a $a; done
            printf %s y | keygate add -s other -a a
            keygate delete -s svc; echo noall=$?
            keygate delete -s svc --all; echo unconfirmed=$?
            keygate delete -s svc --all --yes; echo all=$?
            keygate list --json
            """)
        let v = r.values
        XCTAssertEqual(v["noall"], "2", r.summary)
        XCTAssertEqual(v["unconfirmed"], "36", "no terminal to ask on and no --yes: nothing deleted: \(r.summary)")
        XCTAssertTrue(r.err.contains("This deletes 3 items for good") && r.err.contains("pass --yes"), r.summary)
        XCTAssertEqual(v["all"], "0", r.summary)
        XCTAssertTrue(r.out.contains("\"service\":\"other\""), "other services are untouched: \(r.summary)")
        XCTAssertFalse(r.out.contains("\"service\":\"svc\""), r.summary)
        XCTAssertTrue(r.err.contains("deleted 3 items"), r.summary)
    }

    func test_afterFirstUnlock_survivesLock_butNotLockAll() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s afu | keygate add -s svc -a a --accessible after-first-unlock; echo add=$?
            keygate lock
            printf 'v1=%s\\n' "$(keygate get -s svc -a a)"
            echo n1=$(wc -l < "$HOME/prompts")
            keygate lock --all
            printf 'v2=%s\\n' "$(keygate get -s svc -a a)"
            echo n2=$(wc -l < "$HOME/prompts")
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["v1"], "afu", r.summary)
        XCTAssertEqual(v["n1"], "1", "after-first-unlock stays readable after lock")
        XCTAssertEqual(v["v2"], "afu", r.summary)
        XCTAssertEqual(v["n2"], "2", "lock --all drops it too")
    }

    func test_cachedMasterKey_isPossessorOnly_inTheUserKeyring() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s x | keygate add -s svc -a a; echo add=$?
            id=$(keyctl search @u user "keygate:$(id -u):master"); echo found=$?
            # Read the permissions from a session that possesses @u, as a login session does.
            echo perm=$(keyctl session - sh -c "keyctl link @u @s >/dev/null; keyctl rdescribe $id" | cut -d';' -f4)
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["found"], "0", r.summary)
        XCTAssertEqual(v["perm"], "3f000000", "possessor only: \(r.summary)")
    }

    func test_status_reportsLockState_andJSON() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            keygate status --json; echo
            printf %s x | keygate add -s svc -a a
            keygate status --json; echo
            """)
        let lines = r.out.split(separator: "\n").filter { $0.hasPrefix("{") }
        XCTAssertEqual(lines.count, 2, r.summary)
        XCTAssertTrue(lines.first?.contains("\"initialized\":false") ?? false, r.summary)
        XCTAssertTrue(lines.last?.contains("\"unlocked\":true") ?? false, r.summary)
        XCTAssertFalse(lines.last?.contains("\"secondsUntilLock\":null") ?? true, r.summary)
    }

    /// A read needs the password database only for a home that HOME does not give: a uid the
    /// database does not know (a container's arbitrary uid) reads with HOME set, and without
    /// it is told what is missing. The name in messages is then the uid.
    func test_passwordDatabase_isReadOnlyWithoutHOME() throws {
        try Requirement.require(Requirement.isRoot, "root, to run keygate as a uid with no account")
        let uid: UInt32 = 3_999_999
        XCTAssertNil(getpwuid(uid), "the uid must have no account")
        let home = NSTemporaryDirectory() + "keygate-nouser-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: home) }
        XCTAssertEqual(chown(home, uid, uid), 0)
        func keygate(_ args: [String], home: String?) throws -> ProcessResult {
            var env = ["KEYGATE_STORE=embedded", "KEYGATE_TEST_POLICY_ROOT=" + EmptyPolicyRoot.path, "PATH=/usr/bin:/bin"]
            if let home { env.append("HOME=" + home) }
            return try Subprocess.run(["setpriv", "--reuid=\(uid)", "--regid=\(uid)", "--clear-groups",
                                       "env", "-i"] + env + [PackagePaths.keygateBinary] + args)
        }
        let found = try keygate(["get", "-s", "svc", "-a", "a"], home: home)
        XCTAssertEqual(found.status, 44, "not found, not refused: \(found.summary)")
        let status = try keygate(["status"], home: home)
        XCTAssertEqual(status.status, 0, status.summary)
        XCTAssertTrue(status.out.contains("user: uid \(uid)\n"), status.summary)
        XCTAssertTrue(status.out.contains(home + "/.local/share/keygate"), status.summary)
        let homeless = try keygate(["get", "-s", "svc", "-a", "a"], home: nil)
        XCTAssertEqual(homeless.status, 53, homeless.summary)
        XCTAssertTrue(homeless.err.contains("uid \(uid) has no entry in the password database and HOME is not"), homeless.summary)
        XCTAssertTrue(homeless.err.contains("set HOME"), homeless.summary)
    }

    func test_recoveryKey_shownAtInit_unlocksWithoutThePassword() throws {
        let h = try CLIUserHarness()
        let r = try h.run("keygate init > \"$HOME/recovery\"; echo init=$?; printf %s v | keygate add -s svc -a a; keygate lock")
        XCTAssertEqual(r.values["init"], "0", r.summary)
        let recovery = try String(contentsOfFile: h.user.home + "/recovery", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertGreaterThan(recovery.count, 40, "a recovery key was printed: \(recovery)")
        try h.answerWith("not-the-recovery-key")
        let bad = try h.run("keygate unlock --recovery; echo unlock=$?")
        XCTAssertNotEqual(bad.values["unlock"], "0", bad.summary)
        try h.answerWith(recovery.lowercased())
        let before = try h.promptCount()
        let good = try h.run("""
            keygate unlock --recovery; echo unlock=$?
            printf 'v=%s\\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(good.values["unlock"], "0", good.summary)
        XCTAssertEqual(good.values["v"], "v", good.summary)
        XCTAssertEqual(try h.promptCount(), before + 1, "only the recovery prompt; the read used the unlocked key")
    }
}
