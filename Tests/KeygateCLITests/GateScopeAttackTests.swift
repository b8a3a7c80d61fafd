// The attacks on the gate's scopes, attempts and lockout, each as real processes of the victim's own uid (or of another
// user), against the built keygate and keygate-gatekeeper installed setuid root, with real
// pam_unix: orphans and a subreaper sharing one window, a session whose leader exited,
// guesses cut short by a kill or a file-size limit, one item's policy turning the lockout
// off, and another user filling root's folders. Each succeeds against a gatekeeper without the
// defence it tests (docs/GATEKEEPER.md, "Scopes no process can join", "An authentication the user
// cannot kill", "One lockout per user"). Runs in both passes of make check: the debug build
// with its test hooks, and the installed release build (but the one that needs a test policy).
import Foundation
import KeygateTestSupport
import XCTest

final class GateScopeAttackTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.theGateItself

    /// An askpass that never gives a password: it counts its calls in ~/attacker-prompts and cancels.
    private let cancellingAskpass = """
        cat > "$HOME/cancel-askpass" <<'SH'
        #!/bin/sh
        echo called >> "$HOME/attacker-prompts"
        exit 1
        SH
        chmod 700 "$HOME/cancel-askpass"; : > "$HOME/attacker-prompts"
        """

    /// Waits (up to 60 s) for the file a background read writes its exit status to, then prints it.
    private func awaitStatus(_ name: String) -> String {
        """
        for i in $(seq 600); do [ -s "$HOME/\(name).rc" ] && break; sleep 0.1; done
        echo \(name)=$(cat "$HOME/\(name).rc" 2>/dev/null)
        """
    }

    /// `keygate get -s ITEM -a a` as an orphan: `launcher` wraps shell lines that write their shell's pid
    /// to ~/NAME.pid and then become the read through exec, so the read itself is re-parented when
    /// its parent exits. Its output goes to ~/NAME.out and ~/NAME.err; then it waits (60 s at most) for
    /// the read to end, and prints NAME.asked, the cancelling askpass's calls so far.
    private func orphanRead(_ name: String, item: String, askpass: String, launcher: (String) -> String) -> String {
        let read = "echo $BASHPID > \"$HOME/\(name).pid\"; exec keygate get -s \(item) -a a > \"$HOME/\(name).out\" 2> \"$HOME/\(name).err\""
        return """
            rm -f "$HOME/\(name).pid"
            KEYGATE_ASKPASS=\(askpass) \(launcher(read)) </dev/null >/dev/null 2>&1
            for i in $(seq 600); do [ -s "$HOME/\(name).pid" ] && ! kill -0 $(cat "$HOME/\(name).pid") 2>/dev/null && break; sleep 0.1; done
            echo \(name).asked=$(wc -l < "$HOME/attacker-prompts" 2>/dev/null || echo 0)
            """
    }

    private func output(_ h: CLIUserHarness, _ name: String) -> String {
        ["out", "err"].map { (try? String(contentsOfFile: h.user.home + "/\(name).\($0)", encoding: .utf8)) ?? "" }.joined(separator: "\n")
    }

    // MARK: Scopes

    /// `setsid -f`: every orphan of the user is re-parented to PID 1 (or the nearest subreaper), so a
    /// scope anchored on the parent was one window for all of them. Each is its own session now.
    func test_twoOrphansStartedWithSetsid_doNotShareAWindow() throws {
        let h = try CLIUserHarness()
        let setsidF = { (body: String) in "setsid -f bash -c '\(body.replacingOccurrences(of: "'", with: "'\\''"))'" }
        let victim = try h.run(cancellingAskpass + """

            printf %s orphan-secret | keygate add -s orphan -a a --access user-presence >/dev/null 2>&1; echo add=$?
            \(orphanRead("victim", item: "orphan", askpass: "\"$HOME/askpass\"", launcher: setsidF))
            """)
        XCTAssertEqual(victim.values["add"], "0", victim.summary)
        XCTAssertTrue(output(h, "victim").contains("orphan-secret"), "the victim's orphan reads with its password: \(output(h, "victim"))")
        let attacker = try h.run(cancellingAskpass + """

            \(orphanRead("attacker", item: "orphan", askpass: "\"$HOME/cancel-askpass\"", launcher: setsidF))
            """, askpass: false)
        let stolen = output(h, "attacker")
        XCTAssertFalse(stolen.contains("orphan-secret"), "another orphan read the secret: \(attacker.summary)\n\(stolen)")
        XCTAssertTrue(stolen.contains("cancel"), "its askpass canceled, so the read was canceled: \(stolen)")
        XCTAssertEqual(attacker.values["attacker.asked"], "1", "the orphan was asked for a password: \(attacker.summary)")
    }

    /// A double fork: the read's parent exits at once, and the read is adopted. Another session's
    /// double fork is adopted by the same process, and still has no window.
    func test_aDoubleForkedRead_lendsItsWindowToNoOtherSessionsOrphan() throws {
        let h = try CLIUserHarness()
        let doubleFork = { (body: String) in "bash -c '(\(body.replacingOccurrences(of: "'", with: "'\\''"))) & exit 0'" }
        _ = try h.run(cancellingAskpass + """

            printf %s forked-secret | keygate add -s forked -a a --access user-presence >/dev/null 2>&1
            \(orphanRead("victim", item: "forked", askpass: "\"$HOME/askpass\"", launcher: doubleFork))
            """)
        XCTAssertTrue(output(h, "victim").contains("forked-secret"), output(h, "victim"))
        let attacker = try h.run(cancellingAskpass + """

            \(orphanRead("attacker", item: "forked", askpass: "\"$HOME/cancel-askpass\"", launcher: doubleFork))
            """, askpass: false)
        let stolen = output(h, "attacker")
        XCTAssertFalse(stolen.contains("forked-secret"), "\(attacker.summary)\n\(stolen)")
        XCTAssertEqual(attacker.values["attacker.asked"], "1", "asked, not let through: \(attacker.summary)\n\(stolen)")
    }

    /// A subreaper (as `systemd --user` is) adopts both the victim's and the attacker's orphans:
    /// `setsid bash -c '(exec keygate get …)& exit'`. Neither session has a leader left, so each
    /// read is asked for itself.
    func test_orphansAdoptedByOneSubreaper_doNotShareItsWindow() throws {
        let h = try CLIUserHarness()
        let setsidFork = { (body: String) in "setsid bash -c '(\(body.replacingOccurrences(of: "'", with: "'\\''"))) & exit 0'" }
        // The subreaper runs both the victim's read and, once it has ended, the attacker's.
        let r = try h.run(cancellingAskpass + """

            printf %s reaped-secret | keygate add -s reaped -a a --access user-presence >/dev/null 2>&1
            cat > "$HOME/reaped.sh" <<'SH'
            \(orphanRead("victim", item: "reaped", askpass: "\"$HOME/askpass\"", launcher: setsidFork))
            \(orphanRead("attacker", item: "reaped", askpass: "\"$HOME/cancel-askpass\"", launcher: setsidFork))
            SH
            python3 -c '
            import ctypes, os, subprocess, sys
            libc = ctypes.CDLL(None)
            libc.prctl(36, 1, 0, 0, 0)   # PR_SET_CHILD_SUBREAPER
            print("subreaper=%d" % os.getpid(), flush=True)
            script = subprocess.Popen(["bash", sys.argv[1]])
            while os.wait()[0] != script.pid:   # the orphans it adopts are reaped as they end
                pass
            ' "$HOME/reaped.sh"
            """)
        let stolen = output(h, "attacker")
        XCTAssertNotNil(r.values["subreaper"], r.summary)
        XCTAssertTrue(output(h, "victim").contains("reaped-secret"), "the victim's orphan read with its password: \(output(h, "victim"))")
        XCTAssertFalse(stolen.contains("reaped-secret"), "the subreaper's window was shared: \(r.summary)\n\(stolen)")
        XCTAssertEqual(r.values["attacker.asked"], "1", "\(r.summary)\n\(stolen)")
    }

    /// Inside one session, reads share its window while its leader lives; once the leader has exited,
    /// the session's anchor is gone, and a read is asked again: never a wider scope. The late read is
    /// itself an orphan, re-parented to PID 1 like the orphan that authenticated first, whose parent
    /// was the wider scope the gatekeeper fell back to before.
    func test_aSessionWhoseLeaderExited_isAskedAgain_andGetsNoWiderScope() throws {
        let h = try CLIUserHarness()
        let wait = { (name: String) in
            "for i in $(seq 600); do [ -s \"$HOME/\(name).pid\" ] && ! kill -0 $(cat \"$HOME/\(name).pid\") 2>/dev/null && break; sleep 0.1; done"
        }
        let r = try h.run("""
            printf %s s | keygate add -s led -a a --access user-presence >/dev/null 2>&1
            setsid -f bash -c 'echo $$ > "$HOME/orphan.pid"; exec keygate get -s led -a a >/dev/null 2>&1' </dev/null
            \(wait("orphan"))
            setsid bash -c '
                keygate get -s led -a a >/dev/null 2>&1; echo $? > "$HOME/first.rc"
                echo $(wc -l < "$HOME/prompts") > "$HOME/after-first"
                keygate get -s led -a a >/dev/null 2>&1; echo $? > "$HOME/sibling.rc"
                echo $(wc -l < "$HOME/prompts") > "$HOME/after-sibling"
                (echo $BASHPID > "$HOME/late.pid"; sleep 1; exec keygate get -s led -a a > "$HOME/late.out" 2>&1) &
                exit 0' </dev/null
            \(wait("late"))
            echo first=$(cat "$HOME/first.rc")
            echo sibling=$(cat "$HOME/sibling.rc")
            echo n1=$(cat "$HOME/after-first")
            echo n2=$(cat "$HOME/after-sibling")
            echo n3=$(wc -l < "$HOME/prompts")
            """)
        let n1 = Int(r.values["n1"] ?? "") ?? -1
        XCTAssertEqual(r.values["sibling"], "0", r.summary)
        XCTAssertEqual(Int(r.values["n2"] ?? ""), n1, "a read in the same live session is in its window: \(r.summary)")
        XCTAssertEqual(Int(r.values["n3"] ?? ""), n1 + 1, "after the leader exited, asked again: \(r.summary)")
        let late = (try? String(contentsOfFile: h.user.home + "/late.out", encoding: .utf8)) ?? ""
        XCTAssertEqual(late, "s", "and then read: \(late)")
    }

    // MARK: Attempts

    /// Each guess is killed at 0.5 s, inside pam_unix's 2-second fail delay, before its result is
    /// known. The gatekeeper runs with root's ids in full, so the kill cannot reach it, and the
    /// attempt was counted before PAM ran: five such guesses lock the user out.
    func test_guessesKilledAtHalfASecond_areCounted_andLockTheUserOut() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s g | keygate add -s guess -a a --access user-presence >/dev/null 2>&1; keygate lock --all")
        try h.answerWith("wrong-guess")
        let guesses = try h.run("""
            for i in 1 2 3 4 5; do
                keygate get -s guess -a a >/dev/null 2>&1 &
                client=$!
                sleep 0.5
                helper=$(pgrep -P $client -f keygate-gatekeeper | head -n1)
                [ -n "$helper" ] && { kill -KILL $helper 2>/dev/null; echo killed$i=$?; }
                kill -KILL $client 2>/dev/null; wait $client 2>/dev/null
            done
            echo before=$(wc -l < "$HOME/prompts")
            """, timeout: 180)
        for i in 1...5 where guesses.values["killed\(i)"] != nil {
            XCTAssertNotEqual(guesses.values["killed\(i)"], "0", "the user cannot kill the gatekeeper: \(guesses.summary)")
        }
        try h.answerWith(h.user.password)
        let r = try h.run("""
            sleep 3   # every killed guess's PAM has answered by now
            keygate get -s guess -a a; echo get=$?
            echo after=$(wc -l < "$HOME/prompts")
            """)
        XCTAssertEqual(r.values["get"], "51", "five uncounted guesses would have let the right one in: \(guesses.summary)\n\(r.summary)")
        XCTAssertTrue(r.err.contains("too many failed attempts"), r.summary)
        XCTAssertEqual(r.values["after"], guesses.values["before"], "refused without a prompt: \(r.summary)")
    }

    /// `ulimit -f 0` on the keygate that starts the gatekeeper. Where root may raise the limit back
    /// (CAP_SYS_RESOURCE, on a host) the records are written and the wrong guesses lock the user out;
    /// where it may not (a container's bounding set), no attempt is made at all, since none could be
    /// counted. Either way no guess goes uncounted, and root's folders keep no half-written file.
    /// (The store is the Secret Service: the embedded store's own SQLite file does not open at all
    /// under that limit.)
    func test_guessesUnderAZeroFileSizeLimit_areCountedOrNotMade() throws {
        let h = try CLIUserHarness()
        let env = ["KEYGATE_STORE": "secret-service"]
        _ = try h.run("printf %s g | keygate add -s fsize -a a --access user-presence >/dev/null 2>&1; keygate lock --all",
                      extraEnvironment: env)
        try h.answerWith("wrong-guess")
        let guesses = try h.run("""
            echo start=$(wc -l < "$HOME/prompts")
            (ulimit -f 0; keygate get -s fsize -a a >/dev/null; echo g1=$?)
            (ulimit -f 0; keygate get -s fsize -a a >/dev/null; echo g2=$?)
            echo before=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: env, timeout: 180)
        try h.answerWith(h.user.password)
        let r = try h.run("""
            (ulimit -f 0; keygate get -s fsize -a a; echo get=$?)
            echo after=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: env)
        XCTAssertFalse(r.out.contains("g\n"), "the right password after six wrong guesses read nothing: \(r.summary)")
        if guesses.values["g1"] == "53" {
            XCTAssertTrue(guesses.err.contains("could not count this attempt"), guesses.summary)
            XCTAssertTrue(guesses.err.contains("ulimit -f"), "the message says what to change: \(guesses.summary)")
            XCTAssertEqual(guesses.values["before"], guesses.values["start"], "not one guess reached PAM: \(guesses.summary)")
            XCTAssertEqual(r.values["get"], "53", r.summary)
        } else {
            XCTAssertEqual(guesses.values["g1"], "51", guesses.summary)
            XCTAssertEqual(r.values["get"], "51", "six wrong guesses under ulimit -f 0 lock out: \(guesses.summary)\n\(r.summary)")
            XCTAssertTrue(r.err.contains("too many failed attempts"), r.summary)
            XCTAssertEqual(r.values["after"], guesses.values["before"], "refused without a prompt: \(r.summary)")
        }
        XCTAssertEqual(try Self.leftoverTemporaryFiles(uid: h.user.uid), [], "root's folders hold no half-written file")
    }

    /// One item whose policy section says `lockout = 0` neither turns off, nor resets, nor bypasses the
    /// user's lockout: guesses through it count, and the lockout then holds for every item. (Debug pass
    /// only: it needs a system policy file, which the test hooks' policy root gives.)
    func test_anItemWithLockoutZero_doesNotTurnTheUsersLockoutOff() throws {
        let h = try CLIUserHarness()
        let root = try h.policyRoot(["10-weak.policy": "[service \"weak\"]\nlockout = 0\n"], for: self)
        let env = ["KEYGATE_TEST_POLICY_ROOT": root]
        _ = try h.run("""
            printf %s w | keygate add -s weak -a a --access user-presence >/dev/null 2>&1
            printf %s s | keygate add -s strong -a a --access user-presence >/dev/null 2>&1
            keygate lock --all
            """, extraEnvironment: env)
        try h.answerWith("wrong-guess")
        let guesses = try h.run("""
            keygate get -s weak -a a >/dev/null 2>&1; echo g1=$?
            keygate get -s weak -a a >/dev/null 2>&1; echo g2=$?
            echo before=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: env, timeout: 180)
        XCTAssertEqual(guesses.values["g2"], "51", guesses.summary)
        try h.answerWith(h.user.password)
        let r = try h.run("""
            keygate get -s weak -a a; echo weak=$?
            keygate get -s strong -a a; echo strong=$?
            echo after=$(wc -l < "$HOME/prompts")
            keygate status | grep '^lockout:'
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["weak"], "51", "the weak item is locked out too: \(guesses.summary)\n\(r.summary)")
        XCTAssertEqual(r.values["strong"], "51", "and every other item: \(r.summary)")
        XCTAssertEqual(r.values["after"], guesses.values["before"], "not even asked: \(r.summary)")
        XCTAssertTrue(r.out.contains("lockout: active, "), "keygate status shows it: \(r.summary)")
    }

    // MARK: Root's state

    /// Another user floods unlocks with a file-size limit of 100 bytes, less than root's records file:
    /// root's folders get no leftover temporary file, and what root makes is root:root, not the
    /// caller's group. Where root may raise the limit (CAP_SYS_RESOURCE) the unlocks work; where it may
    /// not (a container), each fails with a message that names the limit.
    func test_anotherUsersFloodUnderATinyFileSizeLimit_leavesNothingInRootsFolders() throws {
        let other = try CLIUserHarness()
        _ = try other.run("keygate init >/dev/null 2>&1; echo init=$?")
        let before = try Self.leftoverTemporaryFiles(uid: nil)
        let flood = try other.run("""
            for i in 1 2 3 4 5 6 7 8; do
                # Its messages through a pipe: a file would be cut at the same 100 bytes.
                err=$(python3 -c 'import os, resource; resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100)); os.execvp("keygate", ["keygate", "unlock"])' \
                    2>&1 >/dev/null)
                echo u$i=$?
                printf '%s\\n' "$err" >> "$HOME/flood.err"
            done
            """, timeout: 180)
        let errors = (try? String(contentsOfFile: other.user.home + "/flood.err", encoding: .utf8)) ?? ""
        if flood.values["u1"] != "0" {
            XCTAssertFalse(GateHardeningTests.mayRaiseHardLimits, "root may raise the limit here, so the unlock works: \(errors)")
            XCTAssertTrue(errors.contains("ulimit -f"), "the message names the limit: \(errors)")
        }
        XCTAssertEqual(try Self.leftoverTemporaryFiles(uid: nil), before, "no temporary file left in root's folders: \(flood.summary)")
        for path in ["/run/keygate/ts/\(other.user.uid)", "/var/lib/keygate/gate/\(other.user.uid)"] {
            var info = stat()
            XCTAssertEqual(lstat(path, &info), 0, path)
            XCTAssertEqual(info.st_uid, 0, "\(path) is root's")
            XCTAssertEqual(info.st_gid, 0, "\(path) has root's group, not the caller's")
        }
    }

    /// Temporary files (".NAME.XXXX.tmp") in root's record and state folders (one uid's, or all).
    static func leftoverTemporaryFiles(uid: UInt32?) throws -> [String] {
        var found: [String] = []
        let fm = FileManager.default
        for root in ["/run/keygate/ts", "/var/lib/keygate/gate"] {
            let folders = uid.map { [root, root + "/\($0)"] } ?? [root] + ((try? fm.contentsOfDirectory(atPath: root)) ?? []).map { root + "/" + $0 }
            for folder in folders {
                for name in (try? fm.contentsOfDirectory(atPath: folder)) ?? [] where name.hasSuffix(".tmp") {
                    found.append(folder + "/" + name)
                }
            }
        }
        return found.sorted()
    }
}
