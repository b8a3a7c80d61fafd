// The embedded store through the real `keygate` binary, run as a real non-root user:
// `keygate migrate` both ways inside a real gnome-keyring session (a binary secret
// comes back byte-identical and nothing prompts), the sticky `auto` choice, and the
// README's CI recipe: `env -i ... setsid keygate ...` with no D-Bus, no terminal and
// an askpass program, which must store a token and read it back without hanging.
import Foundation
import KeygateTestSupport
import XCTest

final class StoreCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    /// These tests are about the store choice itself: KEYGATE_STORE is emptied (as if unset),
    /// whatever pass of the suite runs them.
    private let autoStore = ["KEYGATE_STORE": ""]

    func test_migrate_bothWays_keepsABinarySecretByteIdentical_andNeverPrompts() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf '\\000\\001\\377\\n\\000secret\\200\\000' > "$HOME/secret.bin"
            KEYGATE_STORE=secret-service keygate add -s mig -a bin < "$HOME/secret.bin"; echo add=$?
            printf %s text | KEYGATE_STORE=secret-service keygate add -s mig -a text -l "Text item"; echo add2=$?
            echo p0=$(wc -l < "$HOME/prompts")
            keygate migrate --to embedded --delete-source; echo unconfirmed=$?
            keygate migrate --to embedded --delete-source --yes; echo m1=$?
            echo p1=$(wc -l < "$HOME/prompts")
            KEYGATE_STORE=secret-service keygate exists -s mig -a bin; echo ss1=$?
            KEYGATE_STORE=embedded keygate get -s mig -a bin > "$HOME/out1"; echo get1=$?
            cmp -s "$HOME/secret.bin" "$HOME/out1"; echo same1=$?
            keygate status | sed -n 's/^store-choice: /choice1=/p'
            KEYGATE_STORE=embedded keygate list -s mig | grep -c 'Text item' | sed 's/^/label1=/'
            echo p1b=$(wc -l < "$HOME/prompts")
            keygate migrate --to secret-service --delete-source --yes; echo m2=$?
            echo p2=$(wc -l < "$HOME/prompts")
            KEYGATE_STORE=embedded keygate exists -s mig -a bin; echo emb2=$?
            KEYGATE_STORE=secret-service keygate get -s mig -a bin > "$HOME/out2"; echo get2=$?
            cmp -s "$HOME/secret.bin" "$HOME/out2"; echo same2=$?
            keygate migrate --to secret-service 2> "$HOME/again"; echo m3=$?
            printf 'again=%s\\n' "$(cat "$HOME/again")"
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertEqual([v["add"], v["add2"]], ["0", "0"], r.summary)
        XCTAssertEqual(v["unconfirmed"], "36", "moving needs a yes: \(r.summary)")
        XCTAssertEqual(v["m1"], "0", r.summary)
        XCTAssertEqual(v["p1"], v["p0"], "migrate never prompts: \(r.summary)")
        XCTAssertEqual(v["ss1"], "44", "--delete-source removed the Secret Service copy: \(r.summary)")
        XCTAssertEqual(v["get1"], "0", r.summary)
        XCTAssertEqual(v["same1"], "0", "the secret read from the embedded store is byte-identical: \(r.summary)")
        XCTAssertTrue(v["choice1"]?.hasPrefix("embedded: auto") == true, "migrate recorded the store for auto: \(r.summary)")
        XCTAssertEqual(v["label1"], "1", "attributes moved with the blob: \(r.summary)")
        XCTAssertEqual(v["m2"], "0", r.summary)
        // Counted around the migration itself: the get between the two reads a user-presence item
        // under the installed default policy (default-access), which asks, as it should.
        XCTAssertEqual(v["p2"], v["p1b"], "migrate never prompts: \(r.summary)")
        XCTAssertEqual(v["emb2"], "44", r.summary)
        XCTAssertEqual(v["get2"], "0", r.summary)
        XCTAssertEqual(v["same2"], "0", "back in the Secret Service, still byte-identical: \(r.summary)")
        XCTAssertEqual(v["m3"], "0", "a second run is harmless: \(r.summary)")
        XCTAssertTrue(v["again"]?.contains("0 copied") == true, r.summary)
    }

    func test_migrate_interrupted_thenRunAgain_copiesNothingTwice_andReportsConflicts() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s one | KEYGATE_STORE=secret-service keygate add -s mig -a a; echo add=$?
            printf %s two | KEYGATE_STORE=secret-service keygate add -s mig -a b; echo add2=$?
            keygate migrate --to embedded; echo m1=$?
            keygate migrate --to embedded 2> "$HOME/again"; echo m2=$?
            printf 'again=%s\\n' "$(head -n1 "$HOME/again")"
            printf %s other | KEYGATE_STORE=embedded keygate add -U -s mig -a b; echo upd=$?
            keygate migrate --to embedded --delete-source --yes 2> "$HOME/conflict"; echo m3=$?
            printf 'conflict=%s\\n' "$(grep -c '^conflict: mig/b' "$HOME/conflict")"
            KEYGATE_STORE=secret-service keygate exists -s mig -a b; echo kept=$?
            KEYGATE_STORE=secret-service keygate exists -s mig -a a; echo gone=$?
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertEqual([v["add"], v["add2"], v["m1"], v["m2"], v["upd"]], ["0", "0", "0", "0", "0"], r.summary)
        XCTAssertTrue(v["again"]?.contains("0 copied, 2 already there") == true, r.summary)
        XCTAssertEqual(v["m3"], "45", "a conflict exits errSecDuplicateItem: \(r.summary)")
        XCTAssertEqual(v["conflict"], "1", r.summary)
        XCTAssertEqual(v["kept"], "0", "a conflicting item stays in its source: \(r.summary)")
        XCTAssertEqual(v["gone"], "44", "a verified one is deleted from the source: \(r.summary)")
    }

    func test_auto_staysWithTheEmbeddedStore_onceItHoldsItems_evenWhenASecretServiceAppears() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s token | env -u DBUS_SESSION_BUS_ADDRESS keygate add -s sticky -a a; echo add=$?
            keygate status | sed -n 's/^store-choice: /choice=/p'
            keygate get -s sticky -a a | sed 's/^/got=/'; echo
            KEYGATE_STORE=secret-service keygate exists -s sticky -a a; echo ss=$?
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertTrue(v["choice"]?.hasPrefix("embedded: auto") == true, r.summary)
        XCTAssertTrue(v["choice"]?.contains("recorded in") == true, r.summary)
        XCTAssertEqual(v["got"], "token", r.summary)
        XCTAssertEqual(v["ss"], "44", "nothing went to the Secret Service: \(r.summary)")
    }

    /// doctor, status, list, exists and get decide the store but never write the choice down: a
    /// doctor run once without a bus must not pin a later desktop session to the embedded store.
    func test_readOnlyCommands_neverRecordTheStore_andTheFirstWriteDoes() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            marker="$HOME/.local/share/keygate/store"
            for verb in doctor status list "exists -s v -a a" "get -s v -a a"; do
                env -u DBUS_SESSION_BUS_ADDRESS keygate $verb >/dev/null 2>&1
                [ -e "$marker" ] && echo "wrote=$verb"
            done
            echo folder=$([ -e "$HOME/.local/share/keygate" ] && echo yes || echo no)
            keygate status | sed -n 's/^store-choice: /choice=/p'
            printf %s tok | keygate add -s v -a a; echo add=$?
            echo recorded=$(cat "$marker" 2>/dev/null)
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertNil(v["wrote"], "a read-only command recorded the store: \(r.summary)")
        XCTAssertEqual(v["folder"], "no", "a read-only command made the data folder: \(r.summary)")
        XCTAssertTrue(v["choice"]?.contains("secret-service") ?? false, "with the bus back, auto picks the Secret Service: \(r.summary)")
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["recorded"], "secret-service", "the first write records the choice: \(r.summary)")
    }

    /// The keychain is in the Secret Service, and this session has no bus: status and doctor say
    /// so, with the migrate command, rather than only "no session bus".
    func test_statusAndDoctor_sayWhenTheRecordedStoreIsOutOfReach_withTheMigrateCommand() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s tok | keygate add -s far -a a; echo add=$?
            env -u DBUS_SESSION_BUS_ADDRESS keygate status | sed -n 's/^store-advice: /advice=/p'
            env -u DBUS_SESSION_BUS_ADDRESS keygate doctor | grep -A1 '^FAIL store' | tr '\n' ' ' | sed 's/^/doctor=/'; echo
            keygate status | grep -c '^store-advice' | sed 's/^/withbus=/'
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertTrue(v["advice"]?.contains("keygate migrate --to embedded") ?? false, r.summary)
        XCTAssertTrue(v["advice"]?.contains("secret-session") ?? false, r.summary)
        XCTAssertTrue(v["doctor"]?.contains("which this session cannot reach") ?? false, r.summary)
        XCTAssertTrue(v["doctor"]?.contains("keygate migrate --to embedded") ?? false, r.summary)
        XCTAssertEqual(v["withbus"], "0", "no advice where the store is reachable: \(r.summary)")
    }

    func test_auto_withABusButNoSecretService_usesTheEmbeddedStore() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            start=$(date +%s)
            printf %s v | dbus-run-session -- keygate add -s nobus -a a; echo add=$?
            echo took=$(( $(date +%s) - start ))
            keygate status | sed -n 's/^store-choice: /choice=/p'
            keygate get -s nobus -a a | sed 's/^/got=/'; echo
            """, extraEnvironment: autoStore)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertLessThanOrEqual(Int(v["took"] ?? "99") ?? 99, 8, "within the store deadline: \(r.summary)")
        XCTAssertTrue(v["choice"]?.hasPrefix("embedded: auto") == true, "recorded: \(r.summary)")
        XCTAssertEqual(v["got"], "v", r.summary)
    }

    func test_embeddedStore_holdsNoPlaintext_andIsPrivate() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let canary = "CANARY-\(UUID().uuidString)"
        let r = try h.run("""
            printf %s '\(canary)' | keygate add -s svc -a a -l mylabel --access none; echo add=$?
            db="$HOME/.local/share/keygate/items.sqlite"
            echo mode=$(stat -c %a "$db")
            cat "$db" "$db-wal" 2>/dev/null | grep -c mylabel | sed 's/^/label=/'
            cat "$db" "$db-wal" 2>/dev/null | grep -c '\(canary)' | sed 's/^/plain=/'
            """, extraEnvironment: ["KEYGATE_STORE": "embedded"])
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["mode"], "600", r.summary)
        XCTAssertNotEqual(r.values["label"], "0", "the search did look at the item's bytes: \(r.summary)")
        XCTAssertEqual(r.values["plain"], "0", "no plaintext reaches the embedded store: \(r.summary)")
    }

    func test_badStoreSetting_exits206_namingTheSetting() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            KEYGATE_STORE=sqlite keygate list; echo env=$?
            mkdir -p "$HOME/.config/keygate"; printf 'store = embeded\\n' > "$HOME/.config/keygate/keygate.conf"
            keygate list; echo conf=$?
            """, extraEnvironment: autoStore)
        XCTAssertEqual(r.values["env"], "206", r.summary)
        XCTAssertEqual(r.values["conf"], "206", r.summary)
        XCTAssertTrue(r.err.contains("KEYGATE_STORE=sqlite"), r.summary)
        XCTAssertTrue(r.err.contains("keygate.conf:1"), r.summary)
    }

    /// The README's "CI jobs" recipe, as a CI runner runs it: a clean environment (env -i), a
    /// new session with no controlling terminal (setsid), no D-Bus at all, stdin from
    /// /dev/null, the password only through an askpass program.
    func test_ciRecipe_noDBus_noTty_storesAndReadsAToken_quickly() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let tools = try UserSession.stageTools()
        // The README's recipe, line for line, then what the test looks at.
        let script = """
            askpass="$(mktemp -d)/askpass"
            printf '#!/bin/sh\\nprintf "%%s\\\\n" "$KEYGATE_CI_PASSWORD"\\n' > "$askpass"
            chmod 700 "$askpass"
            export KEYGATE_ASKPASS="$askpass"

            keygate init >/dev/null; echo init=$?
            printf %s 'ghp_token-1234' | keygate add -s ci -a deploy; echo add=$?
            token=$(keygate get -s ci -a deploy); echo get=$?
            printf 'token=%s\\n' "$token"
            keygate status | sed -n 's/^store-choice: /choice=/p'
            tty >/dev/null 2>&1; echo tty=$?
            echo bus=${DBUS_SESSION_BUS_ADDRESS:-none}
            """
        let env = ["HOME=\(h.user.home)", "PATH=\(tools):/usr/bin:/bin", "KEYGATE_CI_PASSWORD=\(h.user.password)",
                   "KEYGATE_TEST_PAM_CONFDIR=\(h.confdir)", "KEYGATE_TEST_KDF=fast",
                   "KEYGATE_TEST_POLICY_ROOT=\(EmptyPolicyRoot.path)"]
        let started = Date()
        let r = try Subprocess.run(["runuser", "-u", h.user.name, "--", "env", "-i"] + env
                                   + ["setsid", "-w", "bash", "-c", script],
                                   environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"], currentDirectory: "/", timeout: 60)
        let elapsed = Date().timeIntervalSince(started)
        let v = r.values
        XCTAssertEqual(r.status, 0, r.summary)
        r.assertValues(["init": "0", "add": "0", "get": "0", "token": "ghp_token-1234"])
        XCTAssertNil(r.err.range(of: "[0-9A-Z]{4}(-[0-9A-Z]{4}){5}", options: .regularExpression),
                     "no recovery key in the job's log: \(r.summary)")
        XCTAssertEqual(v["bus"], "none", r.summary)
        XCTAssertEqual(v["tty"], "1", "no controlling terminal: \(r.summary)")
        XCTAssertTrue(v["choice"]?.hasPrefix("embedded: auto") == true, r.summary)
        XCTAssertLessThan(elapsed, 15, "never waits for a bus or a prompt: \(elapsed) s")
    }
}
