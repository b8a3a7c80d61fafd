// Dependencies that die or stall under the real CLI: gnome-keyring killed in the middle
// of writes, a Secret Service that stops answering while a write is in flight, a kernel
// keyring quota that is full (EDQUOT), and a data folder that is read-only or full.
// Each case must end in a clear error (exit 53 where the store is gone), never a
// partial item, and everything must work again once the dependency is back.
// (A daemon stopped before a `list` is KeygateCLITests.test_unresponsiveDaemon_exits53_withinTheDeadline.)
import Foundation
import KeygateTestSupport
import XCTest

final class DyingDependencyTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.longRun
    func test_keyringDaemonKilledDuringAdds_exits53Clearly_noPartialItem_andRecoversOnRestart() throws {
        let h = try CLIUserHarness()
        let r = try h.run(#"""
            keygate init >/dev/null 2>&1 || { echo setup=init; exit 1; }
            pid=$(pgrep -u "$(id -u)" -x gnome-keyring-d | head -n1); echo daemon=$pid
            : > "$HOME/adds"
            ( for i in $(seq 1 60); do printf %s "value-$i" | keygate add -s dying -a k$i 2>>"$HOME/add.err"; echo "k$i $?" >> "$HOME/adds"; done ) &
            loop=$!
            # Kill once a random number of adds (3 to 12) have finished: always inside the loop,
            # however fast this machine's adds are.
            want=$((RANDOM % 10 + 3))
            while [ "$(wc -l < "$HOME/adds")" -lt "$want" ] && kill -0 $loop 2>/dev/null; do sleep 0.01; done
            kill -KILL "$pid"
            echo killedAfter=$(wc -l < "$HOME/adds")
            wait $loop
            echo after=$(printf %s x | keygate add -s dying -a late 2>&1; echo " status=$?")
            # Bring gnome-keyring back on the same bus, its unencrypted login keyring unlocked.
            printf '' | gnome-keyring-daemon --replace --unlock --components=secrets --daemonize >/dev/null 2>&1
            for t in $(seq 1 50); do keygate list -s none >/dev/null 2>&1; s=$?; [ $s = 53 ] || break; sleep 0.1; done
            gdbus call --session --dest org.freedesktop.secrets --object-path /org/freedesktop/secrets \
              --method org.freedesktop.Secret.Service.Unlock "['/org/freedesktop/secrets/aliases/default']" >/dev/null 2>&1
            while read -r k st; do
                v=$(keygate get -s dying -a $k 2>/dev/null); g=$?
                echo "R $k $st $g $v"
            done < "$HOME/adds"
            echo late=$(keygate get -s dying -a late 2>/dev/null)
            printf %s again | keygate add -s dying -a again; echo readd=$?
            echo reread=$(keygate get -s dying -a again)
            """#, timeout: 180)
        let v = r.values
        XCTAssertFalse((v["daemon"] ?? "").isEmpty, r.summary)
        // Dead: 53, and the message says what to start. Or D-Bus activation has started a fresh
        // daemon already, whose unencrypted keyring (locked until unlocked) Keygate opens as
        // secret-tool does: 0, and the item is there after the restart.
        let after = v["after"] ?? ""
        if after.contains("status=0") {
            XCTAssertEqual(v["late"], "x", "stored through the re-activated daemon: \(r.summary)")
        } else {
            XCTAssertTrue(after.contains("status=53"), "a dead Secret Service is 53: \(r.summary)")
            XCTAssertTrue(after.contains("gnome-keyring"), "the message says what to start: \(r.summary)")
        }
        var stored = 0, refused = 0
        for line in r.out.split(separator: "\n") where line.hasPrefix("R ") {
            let f = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 4 else { XCTFail("bad line \(line)"); continue }
            let key = f[1], addStatus = f[2], getStatus = f[3], value = f.count > 4 ? f[4] : ""
            let index = key.dropFirst()
            switch addStatus {
            case "0":
                stored += 1
                XCTAssertEqual(getStatus, "0", "an item reported stored was lost: \(line)\n\(r.summary)")
                XCTAssertEqual(value, "value-\(index)", String(line))
            case "53":
                refused += 1
                // Refused: absent, or (if the daemon committed just before dying) complete.
                XCTAssertTrue(getStatus == "44" || (getStatus == "0" && value == "value-\(index)"), "partial item: \(line)")
            default:
                XCTFail("add ended with \(addStatus), not 0 or 53: \(line)\n\(r.summary)")
            }
        }
        // The kill fell inside the loop. The adds after it may all succeed: the bus starts
        // gnome-keyring again, and Keygate opens its keyring (so `refused` can be 0).
        XCTAssertLessThan(Int(v["killedAfter"] ?? "60") ?? 60, 60, "the daemon died during the loop: \(r.summary)")
        XCTAssertEqual(v["readd"], "0", "works again after the restart: \(r.summary)")
        XCTAssertEqual(v["reread"], "again", r.summary)
        StressBudget.report("daemon killed", ["stored": stored, "refused": refused, "lost": 0])
    }

    /// gnome-keyring dies in the middle of a read (stopped first, so that the call is surely in
    /// flight, then killed): the read runs once more, the bus starts the daemon again, and
    /// `get` and `list` still answer. A write is not run again: it exits 53 saying the Secret
    /// Service quit (test_keyringDaemonKilledDuringAdds_exits53Clearly_noPartialItem_andRecoversOnRestart).
    func test_daemonKilledDuringARead_theReadIsRunAgain_andAnswers() throws {
        let h = try CLIUserHarness()
        let r = try h.run(#"""
            printf %s kept | keygate add -s crash -a r >/dev/null 2>&1 || { echo setup=add; exit 1; }
            killDuring() {
                pid=$(pgrep -u "$(id -u)" -x gnome-keyring-d | head -n1)
                kill -STOP "$pid"
                "$@" > "$HOME/out" 2>>"$HOME/err" & call=$!
                sleep 0.3; kill -KILL "$pid"
                wait $call
            }
            killDuring keygate get -s crash -a r; echo getStatus=$?; echo got=$(cat "$HOME/out")
            killDuring keygate list -s crash; echo listStatus=$?; echo listed=$(tr '\n' ' ' < "$HOME/out")
            echo errors=$(wc -l < "$HOME/err")
            """#, extraEnvironment: ["KEYGATE_STORE": "secret-service"], timeout: 120)
        let v = r.values
        XCTAssertNil(v["setup"], r.summary)
        XCTAssertEqual(v["getStatus"], "0", r.summary)
        XCTAssertEqual(v["got"], "kept", "the read ran again once the bus had started gnome-keyring: \(r.summary)")
        XCTAssertEqual(v["listStatus"], "0", r.summary)
        XCTAssertTrue((v["listed"] ?? "").contains("crash"), "the item listed: \(r.summary)")
        XCTAssertEqual(v["errors"], "0", "nothing said on stderr: \(r.summary)")
    }

    func test_daemonStoppedDuringWrites_deadlineHolds_andTheItemIsWholeOrAbsent() throws {
        let h = try CLIUserHarness()
        let r = try h.run(#"""
            printf %s old | keygate add -s stall -a k >/dev/null 2>&1 || { echo setup=add; exit 1; }
            pid=$(pgrep -u "$(id -u)" -x gnome-keyring-d | head -n1)
            kill -STOP "$pid"
            s=$(date +%s%N)
            printf %s new | keygate add -U -s stall -a k 2>"$HOME/err1"; echo update=$?
            printf %s fresh | keygate add -s stall -a f 2>"$HOME/err2"; echo create=$?
            keygate get -s stall -a k >/dev/null 2>&1; echo get=$?
            echo ms=$(( ($(date +%s%N) - s) / 1000000 ))
            echo msg=$(head -c 300 "$HOME/err1")
            kill -CONT "$pid"
            sleep 0.5
            echo k=$(keygate get -s stall -a k 2>&1)
            keygate get -s stall -a f >/dev/null 2>&1; echo fstatus=$?
            echo f=$(keygate get -s stall -a f 2>/dev/null)
            """#, extraEnvironment: ["KEYGATE_TEST_STORE_DEADLINE": "2"])
        let v = r.values
        XCTAssertNil(v["setup"], r.summary)
        XCTAssertEqual([v["update"], v["create"], v["get"]], ["53", "53", "53"], r.summary)
        // Three calls, each bounded by the 2 s deadline, plus process start-up.
        XCTAssertLessThanOrEqual(Int(v["ms"] ?? "") ?? 99_999, 3 * 2_000 + 3_000, "the deadline held: \(r.summary)")
        XCTAssertTrue(v["msg"]?.contains("did not answer") ?? false, r.summary)
        // The daemon may still carry out a write queued before it stopped: whole, never torn.
        XCTAssertTrue(v["k"] == "old" || v["k"] == "new", "the item reads its old or new value: \(r.summary)")
        XCTAssertTrue(v["fstatus"] == "44" || v["f"] == "fresh", "the new item is absent or whole: \(r.summary)")
    }

    func test_fullKernelKeyringQuota_readsStillWork_andPrompt() throws {
        let h = try CLIUserHarness()
        let r = try h.run(#"""
            printf %s q | keygate add -s quota -a k >/dev/null 2>&1 || { echo setup=add; exit 1; }
            keygate lock --all >/dev/null
            big=$(head -c 2000 /dev/zero | tr '\0' x); i=0
            while keyctl add user kgfill$i "$big" @u >/dev/null 2>&1; do i=$((i+1)); done
            while keyctl add user kgsmall$i x @u >/dev/null 2>"$HOME/q.err"; do i=$((i+1)); done
            echo quota="$(cat "$HOME/q.err")"
            n0=$(wc -l < "$HOME/prompts")
            echo v1=$(keygate get -s quota -a k)
            echo v2=$(keygate get -s quota -a k)
            echo prompts=$(( $(wc -l < "$HOME/prompts") - n0 ))
            keyctl clear @u
            """#)
        let v = r.values
        XCTAssertTrue(v["quota"]?.contains("quota") ?? false, "the quota really is full (EDQUOT): \(r.summary)")
        XCTAssertEqual(v["v1"], "q", r.summary)
        XCTAssertEqual(v["v2"], "q", r.summary)
        XCTAssertEqual(v["prompts"], "2", "nothing can be cached, so each read prompts: \(r.summary)")
    }

    func test_readOnlyDataFolder_readsWork_andChangesFailClearly() throws {
        let h = try CLIUserHarness()
        let made = try h.run("printf %s ro | keygate add -s ro -a k && keygate lock --all")
        XCTAssertEqual(made.status, 0, made.summary)
        let r = try h.runWithMounts("mount --bind \"$D\" \"$D\" && mount -o remount,bind,ro \"$D\"", """
            touch "$HOME/.local/share/keygate/probe" 2>/dev/null; echo writable=$?
            echo v=$(keygate get -s ro -a k 2>"$HOME/get.err"); echo get=$?; cat "$HOME/get.err" >&2
            printf %s n | keygate add -s ro -a new; echo add=$?
            echo n=$(keygate get -s ro -a new)
            keygate passwd 2>"$HOME/pw.err" </dev/null; echo passwd=$?
            echo pwmsg=$(head -c 300 "$HOME/pw.err")
            """)
        let v = r.values
        XCTAssertEqual(v["writable"], "1", "the folder is read-only: \(r.summary)")
        XCTAssertEqual(v["v"], "ro", "an existing item still reads: \(r.summary)")
        XCTAssertEqual(v["add"], "0", "items live in the Secret Service, so adding works: \(r.summary)")
        XCTAssertEqual(v["n"], "n", r.summary)
        XCTAssertNotEqual(v["passwd"], "0", r.summary)
        let after = try h.run("keygate lock --all; echo v=$(keygate get -s ro -a k)")
        XCTAssertEqual(after.values["v"], "ro", "nothing was lost: \(after.summary)")
    }

    func test_readOnlyHome_embeddedStore_readsWork() throws {
        // A read needs no write. The whole home read-only (a container's, a locked-down account's).
        let h = try CLIUserHarness()
        let made = try h.run("""
            printf %s ro-plain | KEYGATE_STORE=embedded keygate add -s ro -a plain --access none
            printf %s ro-gated | KEYGATE_STORE=embedded keygate add -s ro -a gated --access user-presence
            keygate lock --all
            """)
        XCTAssertEqual(made.status, 0, made.summary)
        let r = try h.runWithMounts("H=\"${D%/.local/share/keygate}\"; mount --bind \"$H\" \"$H\" && mount -o remount,bind,ro \"$H\"", """
            touch "$HOME/probe" 2>/dev/null; echo writable=$?
            export KEYGATE_STORE=embedded
            echo plain=$(keygate get -s ro -a plain 2>/tmp/kg-ro-$$.err); cat /tmp/kg-ro-$$.err >&2
            echo gated=$(keygate get -s ro -a gated 2>/tmp/kg-ro-$$.err); cat /tmp/kg-ro-$$.err >&2; rm -f /tmp/kg-ro-$$.err
            keygate list -s ro | grep -c 'service: ro' | sed 's/^/listed=/'
            printf %s n | keygate add -s ro -a new --access none; echo add=$?
            """, secretSession: false)
        let v = r.values
        XCTAssertEqual(v["writable"], "1", "the home is read-only: \(r.summary)")
        XCTAssertEqual(v["plain"], "ro-plain", "a read needs no write: \(r.summary)")
        XCTAssertEqual(v["gated"], "ro-gated", "nor a gated one: \(r.summary)")
        XCTAssertEqual(v["listed"], "2", r.summary)
        XCTAssertNotEqual(v["add"], "0", "a write cannot succeed on a read-only home: \(r.summary)")
        XCTAssertTrue(r.err.contains("the file system is read-only. Reads still work; to add or change items, make it writable"),
                      r.summary)
        XCTAssertFalse(r.err.contains("or set XDG_DATA_HOME"), "no advice that points away from the items: \(r.summary)")
    }

    func test_fullDisk_doctorFails_namingTheDiskAndWhatFails() throws {
        // A full disk is a state doctor names: the disk, and what fails on it.
        let h = try CLIUserHarness()
        let made = try h.run("printf %s d | keygate add -s disk -a k --access none")
        XCTAssertEqual(made.status, 0, made.summary)
        let r = try h.runWithMounts("""
            t=$(mktemp -d) && mount -t tmpfs -o size=256k,mode=0700 kg-full "$t" && cp -a "$D/." "$t/" \\
              && chown "$(stat -c %u:%g "$D")" "$t" && mount --bind "$t" "$D" \\
              && (dd if=/dev/zero of="$D/.filler" bs=4k 2>/dev/null; true)
            """, """
            keygate doctor > "$HOME/doctor.out" 2>&1; echo doctor=$?
            grep 'disk-space' "$HOME/doctor.out"; grep -A1 '^FAIL disk-space' "$HOME/doctor.out" | tail -1
            echo v=$(keygate get -s disk -a k)
            """)
        XCTAssertEqual(r.values["doctor"], "53", "a FAIL: \(r.summary)")
        XCTAssertTrue(r.out.contains("FAIL disk-space: "), r.summary)
        XCTAssertTrue(r.out.contains(" KiB free where \(h.user.home)/.local/share/keygate is: the disk is full, "
                                     + "so adding items, keygate passwd and unlocking's records fail (reads still work)"), r.summary)
        XCTAssertTrue(r.out.contains("     -> free some space on that file system, then run keygate doctor again"), r.summary)
        XCTAssertEqual(r.values["v"], "d", "reads still work: \(r.summary)")
    }

    func test_fullDataFolder_passwdFailsClearly_andTheOldPasswordStillOpens() throws {
        let h = try CLIUserHarness()
        let made = try h.run("printf %s full | keygate add -s full -a k && keygate lock --all")
        XCTAssertEqual(made.status, 0, made.summary)
        let old = h.user.password
        let new = "full-\(UUID().uuidString.prefix(10))"
        try h.user.changePassword(to: new)
        try h.answerWith(new)
        try h.queueAnswers([new, old])
        // A 256 KiB tmpfs holding a copy of the data folder, then filled to the last byte.
        let r = try h.runWithMounts("""
            t=$(mktemp -d) && mount -t tmpfs -o size=256k,mode=0700 kg-full "$t" && cp -a "$D/." "$t/" \
              && chown "$(stat -c %u:%g "$D")" "$t" && mount --bind "$t" "$D" \
              && (dd if=/dev/zero of="$D/.filler" bs=4k 2>/dev/null; true)
            """, """
            echo df=$(df --output=avail "$HOME/.local/share/keygate" | tail -1)
            keygate passwd 2>"$HOME/pw.err"; echo passwd=$?
            echo pwmsg=$(head -c 300 "$HOME/pw.err")
            ls -a "$HOME/.local/share/keygate/protectors" | grep -c tmp | sed 's/^/tmpfiles=/'
            """)
        let v = r.values
        XCTAssertEqual(v["passwd"], "53", "a full disk is 'not available', with advice: \(r.summary)")
        XCTAssertTrue(v["pwmsg"]?.contains("No space left") ?? false, r.summary)
        XCTAssertEqual(v["tmpfiles"], "0", "no temporary file left behind: \(r.summary)")
        // The real folder (outside the namespace) was never touched: the old password opens it.
        try h.queueAnswers([])
        try h.answerWith(new)
        let after = try h.run("keygate lock --all; keygate get -s full -a k; echo get=$?")
        XCTAssertEqual(after.values["get"], "51", "the keychain still holds the old password: \(after.summary)")
        try h.queueAnswers([new, old])
        let fixed = try h.run("keygate passwd; echo passwd=$?; keygate lock --all; echo v=$(keygate get -s full -a k)")
        XCTAssertEqual(fixed.values["passwd"], "0", fixed.summary)
        XCTAssertEqual(fixed.values["v"], "full", fixed.summary)
    }
}

extension CLIUserHarness {
    /// As `run`, inside a private mount namespace prepared by `mounts` (a root shell
    /// script; $D is the user's Keygate data folder), so the host never sees the mounts.
    /// `secretSession: false` runs the script with no session bus (the embedded store), for mounts
    /// under which gnome-keyring cannot start (a read-only home).
    func runWithMounts(_ mounts: String, _ script: String, secretSession: Bool = true, timeout: TimeInterval = 120) throws -> ProcessResult {
        let tools = try UserSession.stageTools()
        var env = ["HOME": user.home, "USER": user.name, "LOGNAME": user.name,
                   "PATH": "\(tools):/usr/local/bin:/usr/bin:/bin", "KEYGATE_TEST_PAM_CONFDIR": confdir,
                   "KEYGATE_TEST_KDF": "fast", "KEYGATE_TEST_POLICY_ROOT": EmptyPolicyRoot.path, "KEYGATE_ASKPASS": askpass]
        env["KEYGATE_TEST_HOOKS"] = nil
        let assignments = env.keys.sorted().map { "\($0)=\(env[$0] ?? "")" }
        let userArgv = ["runuser", "-u", user.name, "--", "env", "-i"] + assignments
            + ["setsid", "-w"] + (secretSession ? [tools + "/secret-session"] : []) + ["bash", "-c", script, "keygate-user-session"]
        let root = "D='\(dataDirectory)'; \(mounts) || { echo mounts-failed >&2; exit 97; }; exec \"$@\""
        return try Subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", root, "sh"] + userArgv,
                                  environment: rootToolEnvironment, currentDirectory: "/", timeout: timeout)
    }
}
