// Crash consistency: the real `keygate add -U`, `keygate passwd` and pam_keygate.so's
// password-change re-wrap are SIGKILLed at random moments (uniform over each command's
// measured run time), StressBudget.kills times each. After every kill the item reads
// back as its old or its new value, never as anything else, and the master key opens
// with the old or the new password. The writes under test are AtomicFile's (protectors,
// keys.json) and gnome-keyring's (items).
import Foundation
import KeygateTestSupport
import XCTest

final class CrashConsistencyTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.longRun
    /// `keygate add -U` killed anywhere: the item holds its old or its new secret, and a
    /// second item nobody writes keeps its own.
    func test_addUpdate_killedAtRandom_itemReadsOldOrNew_neverGarbage() throws {
        try addUpdateKillLoop(changingTheClass: false, name: "add -U")
    }

    /// As above, every other update also changing the accessibility class, which the sealed
    /// blob is bound to: the store creates the new item whole before deleting the old one, so a
    /// kill in between leaves two complete items (either reads), never a blob under attributes
    /// it was not sealed for (which would read as "tampered", exit 93).
    func test_addUpdateChangingTheClass_killedAtRandom_itemReadsOldOrNew_neverGarbage() throws {
        try addUpdateKillLoop(changingTheClass: true, name: "add -U --accessible")
    }

    private func addUpdateKillLoop(changingTheClass: Bool, name: String) throws {
        let h = try CLIUserHarness()
        let kills = StressBudget.kills
        let r = try h.run(#"""
            set -u
            keygate init >/dev/null 2>&1 || { echo setup=init; exit 1; }
            printf %s v0 | keygate add -s crash -a k || { echo setup=k; exit 1; }
            printf %s f0 | keygate add -s crash -a flip || { echo setup=flip; exit 1; }
            printf %s steady | keygate add -s crash -a steady || { echo setup=steady; exit 1; }
            t0=$(date +%s%N)
            for j in 1 2 3 4 5; do printf %s v0 | keygate add -U -s crash -a k; done
            t1=$(date +%s%N)
            dur=$(( (t1 - t0) / 5000 ))            # one update, in microseconds
            echo dur_us=$dur
            old=v0; fold=f0; facc=when-unlocked
            killed=0; completed=0; bad=0; odd=0; newwins=0
            check() {  # item expected-old expected-new status-of-writer
                got=$(keygate get -s crash -a "$1" 2>"$HOME/get.err"); g=$?
                if [ $g = 0 ] && [ "$got" = "$3" ]; then return 0; fi
                if [ $g = 0 ] && [ "$got" = "$2" ] && [ "$4" != 0 ]; then return 1; fi
                bad=$((bad + 1)); echo "BAD item=$1 i=$i writer=$4 get=$g got=$got old=$2 new=$3 err=$(cat "$HOME/get.err")"
                return 2
            }
            for i in $(seq 1 KILLS); do
                # Alternate: the secret alone, then the secret and the accessibility class.
                if [ FLIP = 0 ] || [ $((i % 2)) = 1 ]; then item=k; new="v$i-$RANDOM"; prev=$old; extra=""
                else
                    item=flip; new="f$i-$RANDOM"; prev=$fold
                    if [ $facc = when-unlocked ]; then nacc=after-first-unlock; else nacc=when-unlocked; fi
                    extra="--accessible $nacc"
                fi
                printf %s "$new" > "$HOME/new"
                delay=$(( (RANDOM * 32768 + RANDOM) % (dur + 1) ))
                keygate add -U -s crash -a $item $extra < "$HOME/new" 2>/dev/null & pid=$!
                sleep "$((delay / 1000000)).$(printf %06d $((delay % 1000000)))"
                kill -KILL $pid 2>/dev/null
                wait $pid; st=$?
                case $st in 137) killed=$((killed + 1)) ;; 0) completed=$((completed + 1)) ;; *) odd=$((odd + 1)); echo "ODD writer status $st" ;; esac
                check $item "$prev" "$new" $st; c=$?
                if [ $c = 0 ]; then
                    [ $st = 137 ] && newwins=$((newwins + 1))
                    if [ $item = k ]; then old=$new; else fold=$new; facc=$nacc; fi
                fi
            done
            [ "$(keygate get -s crash -a steady)" = steady ] || { bad=$((bad + 1)); echo "BAD steady item changed"; }
            n=$(keygate list -s crash --json | grep -o '"account"' | wc -l)
            [ "$n" = 3 ] || { bad=$((bad + 1)); echo "BAD $n items instead of 3"; }
            printf 'killed=%s\ncompleted=%s\nbad=%s\nodd=%s\nnewwins=%s\n' $killed $completed $bad $odd $newwins
            """#.replacingOccurrences(of: "KILLS", with: String(kills)).replacingOccurrences(of: "FLIP", with: changingTheClass ? "1" : "0"),
            timeout: Double(60 + kills * 3))
        let v = r.values
        XCTAssertEqual(v["bad"], "0", "an item read back as neither its old nor its new value: \(r.summary)")
        XCTAssertEqual(v["odd"], "0", "the writer failed in a way other than the kill: \(r.summary)")
        let killed = Int(v["killed"] ?? "") ?? 0, completed = Int(v["completed"] ?? "") ?? 0
        XCTAssertEqual(killed + completed, kills, r.summary)
        XCTAssertGreaterThan(killed, kills / 4, "most runs must really be killed mid-way: \(r.summary)")
        StressBudget.report(name, ["kills": killed, "completed": completed, "killedAfterCommit": Int(v["newwins"] ?? "") ?? -1,
                                        "lost": Int(v["bad"] ?? "") ?? -1])
    }

    /// `keygate passwd` killed anywhere: the keychain opens with the previous or the
    /// current password, plain and user-presence items still read, and a current-set
    /// item added afterwards reads (keys.json agrees with login.json once unlocked).
    func test_passwd_killedAtRandom_oldOrNewPasswordUnlocks_andItemsRead() throws {
        let h = try CLIUserHarness()
        try h.usePAMMatrix()
        let kills = StressBudget.kills
        // Askpass: the previous password when asked for it, else the current one.
        try h.writeUserFile("askpass-pw", """
            #!/bin/sh
            case "$1" in *previous*) cat "$HOME/pw-old" ;; *) cat "$HOME/pw-cur" ;; esac
            """, mode: 0o700)
        let r = try h.run(#"""
            set -u
            setpw() { printf '%s:%s:keygate\n' "$USER" "$1" > "$HOME/passdb"; printf %s "$1" > "$HOME/pw-cur"; }
            cur=pw0-$RANDOM; setpw "$cur"
            keygate init >/dev/null 2>&1 || { echo setup=init; exit 1; }
            printf %s plain | keygate add -s pw -a plain || { echo setup=plain; exit 1; }
            printf %s up | keygate add -s pw -a up --access user-presence || { echo setup=up; exit 1; }
            # Measure: three real changes.
            t0=$(date +%s%N)
            for j in 1 2 3; do
                next=pw$j-$RANDOM; printf %s "$cur" > "$HOME/pw-old"; setpw "$next"
                keygate passwd 2>/dev/null || { echo setup=passwd$j; exit 1; }
                cur=$next
            done
            t1=$(date +%s%N)
            dur=$(( (t1 - t0) / 3000 ))
            echo dur_us=$dur
            killed=0; completed=0; bad=0; odd=0; newwins=0
            for i in $(seq 1 KILLS); do
                next=pwk$i-$RANDOM
                printf %s "$cur" > "$HOME/pw-old"; setpw "$next"
                delay=$(( (RANDOM * 32768 + RANDOM) % (dur + 1) ))
                keygate passwd 2>/dev/null & pid=$!
                sleep "$((delay / 1000000)).$(printf %06d $((delay % 1000000)))"
                kill -KILL $pid 2>/dev/null
                wait $pid; st=$?
                case $st in 137) killed=$((killed + 1)) ;; 0) completed=$((completed + 1)) ;; *) odd=$((odd + 1)); echo "ODD passwd status $st" ;; esac
                keygate lock --all >/dev/null
                if keygate unlock 2>/dev/null; then
                    cur=$next; newwins=$((newwins + 1))
                else
                    [ $st = 0 ] && { bad=$((bad + 1)); echo "BAD i=$i passwd finished but the new password fails"; }
                    setpw "$cur"
                    keygate unlock 2>"$HOME/unlock.err" || { bad=$((bad + 1)); echo "BAD i=$i neither password unlocks: $(cat "$HOME/unlock.err")"; break; }
                fi
                [ "$(keygate get -s pw -a plain 2>&1)" = plain ] || { bad=$((bad + 1)); echo "BAD i=$i plain item"; }
                [ "$(keygate get -s pw -a up 2>&1)" = up ] || { bad=$((bad + 1)); echo "BAD i=$i presence item"; }
                if [ $((i % 5)) = 0 ]; then
                    printf %s cs$i | keygate add -U -s pw -a cs --access current-set 2>/dev/null
                    [ "$(keygate get -s pw -a cs 2>&1)" = cs$i ] || { bad=$((bad + 1)); echo "BAD i=$i current-set item added after the kill"; }
                fi
            done
            printf 'killed=%s\ncompleted=%s\nbad=%s\nodd=%s\nnewwins=%s\n' $killed $completed $bad $odd $newwins
            """#.replacingOccurrences(of: "KILLS", with: String(kills)),
            extraEnvironment: ["KEYGATE_ASKPASS": h.user.home + "/askpass-pw"], timeout: Double(120 + kills * 5))
        let v = r.values
        XCTAssertNil(v["setup"], r.summary)
        XCTAssertEqual(v["bad"], "0", r.summary)
        XCTAssertEqual(v["odd"], "0", r.summary)
        let killed = Int(v["killed"] ?? "") ?? 0, completed = Int(v["completed"] ?? "") ?? 0
        XCTAssertEqual(killed + completed, kills, r.summary)
        XCTAssertGreaterThan(killed, kills / 4, "most runs must really be killed mid-way: \(r.summary)")
        StressBudget.report("passwd", ["kills": killed, "completed": completed, "newPasswordWon": Int(v["newwins"] ?? "") ?? -1,
                                        "lost": Int(v["bad"] ?? "") ?? -1])
    }

    /// pam_keygate.so's chauthtok (what `passwd` runs) killed anywhere in the re-wrap (the
    /// driver and the keygate-pam-helper it started, together):
    /// the login protector opens with the old or the new password, never neither.
    func test_pamRewrap_killedAtRandom_oldOrNewPasswordUnlocks() throws {
        let module = PAMModuleTests.modulePath
        try Requirement.require(FileManager.default.fileExists(atPath: module), "the built PAM module at \(module) (run make pam)")
        let setItems = try XCTUnwrap(PAMMatrix.modulePath.map { $0.replacingOccurrences(of: "pam_matrix.so", with: "pam_set_items.so") })
        try Requirement.require(FileManager.default.fileExists(atPath: setItems), "pam_wrapper's pam_set_items.so")
        let h = try CLIUserHarness()
        try h.usePAMMatrix(passdb: h.confdir + "/passdb")
        var current = "pam0-\(UUID().uuidString.prefix(8))"
        try h.setMatrixPassword(current, passdb: h.confdir + "/passdb")
        let made = try h.run("printf %s s1 | keygate add -s svc -a a && printf %s up | keygate add -s svc -a up --access user-presence && keygate lock --all")
        XCTAssertEqual(made.status, 0, made.summary)
        let stack = try Stack(h, """
        password required \(setItems)
        password optional \(PAMModuleTests.module)
        """)
        let log = try SyslogCapture()
        defer { log.stop() }
        let rewrap = { (old: String, new: String) throws -> Process in
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            p.arguments = ["-m", "--propagation", "private", PackagePaths.root + "/Tests/PAMDriver/with-log-socket.sh",
                           log.folder, try PAMDriver.binary(), "--ruid", String(h.user.uid), stack.confdir, stack.service,
                           h.user.name, "passwd"]
            p.environment = ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "PAM_OLDAUTHTOK": old, "PAM_AUTHTOK": new]
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            return p
        }
        // Measure three complete re-wraps. The shortest is the one to aim inside: the first
        // may carry one-off costs (a cold cache, a per-boot calibration) the later ones skip.
        var duration = Double.infinity
        for j in 1...3 {
            let next = "pam\(j)-\(UUID().uuidString.prefix(8))"
            let start = Date()
            let p = try rewrap(current, next)
            p.waitUntilExit()
            duration = min(duration, Date().timeIntervalSince(start))
            XCTAssertEqual(p.terminationStatus, 0)
            XCTAssertTrue(try h.unlocks(with: next, passdb: h.confdir + "/passdb"), "a complete re-wrap must take")
            current = next
        }
        var killed = 0, completed = 0, lost = 0, newWins = 0
        for i in 1...StressBudget.pamKills {
            let next = "pamk\(i)-\(UUID().uuidString.prefix(8))"
            let p = try rewrap(current, next)
            usleep(UInt32(Double.random(in: 0...duration) * 1_000_000))
            // The re-wrap runs in keygate-pam-helper, the driver's child: kill both at once.
            let pid = p.processIdentifier
            let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0) }
            for child in children { kill(child, SIGKILL) }
            kill(pid, SIGKILL)
            p.waitUntilExit()
            if p.terminationReason == .uncaughtSignal { killed += 1 } else { completed += 1 }
            if try h.unlocks(with: next, passdb: h.confdir + "/passdb") {
                current = next
                newWins += 1
            } else if try !h.unlocks(with: current, passdb: h.confdir + "/passdb") {
                lost += 1
                XCTFail("after kill \(i) neither the old nor the new password opens the keychain")
                break
            } else if p.terminationReason == .exit {
                XCTFail("the re-wrap finished, yet only the old password opens the keychain (kill \(i))")
            }
        }
        try h.setMatrixPassword(current, passdb: h.confdir + "/passdb")
        let items = try h.run("""
            keygate lock --all
            printf 'plain=%s\\n' "$(keygate get -s svc -a a)"
            printf 'up=%s\\n' "$(keygate get -s svc -a up)"
            """)
        XCTAssertEqual(items.values["plain"], "s1", items.summary)
        XCTAssertEqual(items.values["up"], "up", "the presence key survives every re-wrap: \(items.summary)")
        XCTAssertGreaterThan(killed, StressBudget.pamKills / 4, "most runs must really be killed mid-way")
        StressBudget.report("pam chauthtok", ["kills": killed, "completed": completed, "newPasswordWon": newWins, "lost": lost])
    }
}

extension CLIUserHarness {
    /// Makes the `keygate` and `keygate-passcode` services check passwords against a
    /// pam_matrix file (default: $HOME/passdb, which the user's scripts rewrite), so a
    /// test can change "the login password" as often as it likes without touching
    /// /etc/shadow.
    func usePAMMatrix(passdb: String? = nil) throws {
        let matrix = try XCTUnwrap(PAMMatrix.modulePath, "pam_wrapper's pam_matrix.so")
        let file = passdb ?? user.home + "/passdb"
        for service in ["keygate", "keygate-passcode"] {
            try "auth required \(matrix) passdb=\(file)\naccount required \(matrix) passdb=\(file)\n"
                .write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: confdir + "/" + service)
        }
    }

    /// Sets the pam_matrix password (a root-owned, world-readable file) and the askpass answer.
    func setMatrixPassword(_ password: String, passdb: String) throws {
        try "\(user.name):\(password):keygate\n\(user.name):\(password):keygate-passcode\n"
            .write(toFile: passdb, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: passdb)
        try answerWith(password)
    }

    /// Whether `keygate unlock` with `password` (PAM accepting it) opens the keychain,
    /// run straight through runuser: unlocking needs no Secret Service.
    func unlocks(with password: String, passdb: String) throws -> Bool {
        try setMatrixPassword(password, passdb: passdb)
        let tools = try UserSession.stageTools()
        let env = ["HOME=\(user.home)", "USER=\(user.name)", "LOGNAME=\(user.name)", "PATH=\(tools):/usr/bin:/bin",
                   "KEYGATE_TEST_PAM_CONFDIR=\(confdir)", "KEYGATE_TEST_KDF=fast", "KEYGATE_ASKPASS=\(askpass)",
                   "KEYGATE_TEST_POLICY_ROOT=\(EmptyPolicyRoot.path)"]
        let r = try Subprocess.run(["runuser", "-u", user.name, "--", "env", "-i"] + env
                                   + ["sh", "-c", "keygate lock --all >/dev/null; keygate unlock"],
                                   environment: rootToolEnvironment, currentDirectory: "/", timeout: 60)
        if r.status != 0 && r.status != 51 { XCTFail("keygate unlock failed oddly: \(r.summary)") }
        return r.status == 0
    }
}
