// Gated items through keygate-secret-service, with real processes: the built daemon on a private
// session bus with no other provider (scripts/keygate-secret-session), real clients (secret-tool,
// python SecretStorage, jeepney connections), the setuid gatekeeper running real pam_unix for a
// real (pooled) user, and an askpass program as the person: it answers the password, or cancels
// (exits 1) while $HOME/cancel exists. Each read of a gated item asks the person, fresh; the
// gatekeeper neither reads nor leaves a record of it (root's records file is read after the run);
// what a prompt opens serves its connection's next read, once, and no other connection's.
//
// Not in the embedded-store pass: these tests choose their store and bus themselves.
import Foundation
import KeygateTestSupport
import XCTest

final class SecretServiceGatedTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    private var fprintSession: FprintSession?

    override func tearDown() {
        fprintSession?.stop()
        fprintSession = nil
        super.tearDown()
    }

    private func harness() throws -> CLIUserHarness {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service at \(PackagePaths.secretServiceBinary) (run swift build)")
        for tool in ["/usr/bin/secret-tool", "/usr/bin/dbus-daemon", "/usr/bin/python3"] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: tool), "\(tool) (scripts/install-deps)")
        }
        let h = try CLIUserHarness(sharedUser: true)
        // The person: logs each question (count and text), cancels while $HOME/cancel exists, else
        // answers from the private answer file.
        try h.writeUserFile("gate-askpass", """
            #!/bin/sh
            echo prompt >> "$HOME/prompts"
            printf '%s\\n' "$1" >> "$HOME/prompt-texts"
            [ -e "$HOME/cancel" ] && exit 1
            cat "$HOME/answer"
            """, mode: 0o700)
        return h
    }

    /// Runs `shell`, then `python` (jeepney helpers of SecretServiceAttackTests in scope), as the
    /// user inside a keygate-secret-session whose daemon asks through gate-askpass.
    private func run(_ h: CLIUserHarness, shell: String, python: String = "", environment: [String: String] = [:],
                     timeout: TimeInterval = 300) throws -> ProcessResult {
        try h.writeUserFile("client.py", SecretServiceAttackTests.prelude + "\n" + python, mode: 0o600)
        var env = ["KEYGATE_ASKPASS": h.user.home + "/gate-askpass"]
        env.merge(environment) { _, new in new }
        return try h.run("""
            export KEYGATE_STORE=embedded
            keygate init </dev/null >/dev/null 2>"$HOME/init.err" || { echo init-failed; cat "$HOME/init.err"; }
            asked() { wc -l < "$HOME/prompts"; }
            \(shell)
            \(python.isEmpty ? "" : "/usr/bin/python3 \"$HOME/client.py\" 2>&1")
            echo daemon-alive=$(kill -0 "$KEYGATE_SECRET_SERVICE_PID" 2>/dev/null && echo yes || echo no)
            echo '--- daemon log'; cat "$KEYGATE_SECRET_SESSION_DIR/daemon.log"
            """, extraEnvironment: env, timeout: timeout, session: "keygate-secret-session")
    }

    /// Root's records of the user (GateRecords): authentications a window could be read from.
    private func recordedAuthentications(_ h: CLIUserHarness, service: String) -> [String] {
        let text = (try? String(contentsOfFile: "/run/keygate/ts/\(h.user.uid)", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init).filter { $0.hasPrefix("auth \(service) ") }
    }

    /// The user's lines in root's audit record.
    private func auditLines(_ h: CLIUserHarness) -> [String] {
        let text = (try? String(contentsOfFile: "/var/log/keygate/users/\(h.user.uid).log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    static let addGated = """
        printf %s 'GATED-SECRET-5e1' | keygate add -s kg-gated -a bob --label 'GATED-LABEL-c4' --access user-presence >/dev/null 2>&1
        echo add=$?
        printf %s 'OPEN-SECRET-22' | keygate add -s kg-open -a bob --access none >/dev/null 2>&1

        """

    /// secret-tool lookup of a gated item: the prompt answered gives the secret, the next read asks
    /// again, a cancelled one gives none; an ungated item asks nothing. The prompt names the item
    /// and the program; the gatekeeper records no authentication and says so in its audit line.
    func test_secretToolLookup_ofAGatedItem_asksEachTime_answeredGivesIt_cancelledGivesNone() throws {
        let h = try harness()
        let before = recordedAuthentications(h, service: "keygate").count
        let auditBefore = auditLines(h).count
        let r = try run(h, shell: Self.addGated + """
            p0=$(asked)
            echo answered=[$(secret-tool lookup service kg-gated account bob)]
            p1=$(asked)
            echo again=[$(secret-tool lookup service kg-gated account bob)]
            p2=$(asked)
            touch "$HOME/cancel"
            echo cancelled=[$(secret-tool lookup service kg-gated account bob)]
            p3=$(asked)
            rm -f "$HOME/cancel"
            echo open=[$(secret-tool lookup service kg-open account bob)]
            p4=$(asked)
            echo asks=$((p1 - p0)),$((p2 - p1)),$((p3 - p2)),$((p4 - p3))
            echo named=$(grep -c 'secret-tool (pid [0-9]*) wants to read "GATED-LABEL-c4"' "$HOME/prompt-texts")
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["answered"], "[GATED-SECRET-5e1]", "the person answered: the secret: \(r.summary)")
        XCTAssertEqual(v["again"], "[GATED-SECRET-5e1]", r.summary)
        XCTAssertEqual(v["cancelled"], "[]", "the person cancelled: nothing: \(r.summary)")
        XCTAssertEqual(v["asks"], "1,1,1,0", "each read of the gated item asked once, the ungated one never: \(r.summary)")
        XCTAssertEqual(v["open"], "[OPEN-SECRET-22]", r.summary)
        XCTAssertEqual(v["named"], "3", "every prompt named the program and the item: \(r.summary)\n\(h.prompts())")
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
        XCTAssertEqual(recordedAuthentications(h, service: "keygate").count, before,
                       "no authentication a window could be read from: \(recordedAuthentications(h, service: "keygate"))")
        let unrecorded = auditLines(h).dropFirst(auditBefore).filter { $0.contains("op=open") && $0.contains("recorded=no") && $0.contains("service=kg-gated") }
        XCTAssertEqual(unrecorded.filter { $0.contains("result=granted") }.count, 2, "the audit says so: \(auditLines(h).suffix(12))")
    }

    /// What a prompt opens serves the connection that asked, for its next read, once: another
    /// connection (its SearchItems, GetSecret, GetSecrets) gets nothing, and a second read asks again.
    func test_anUnlockedGatedItem_servesItsConnectionsNextReadOnce_andNoOtherConnection() throws {
        let h = try harness()
        let r = try run(h, shell: Self.addGated, python: #"""
            from jeepney.bus_messages import message_bus, MatchRule
            a = open_dbus_connection(bus="SESSION"); sa = plain_session(a)
            b = open_dbus_connection(bus="SESSION"); sb = plain_session(b)
            item = call(a, SERVICE, "SearchItems", "a{ss}", ({"service": "kg-gated"},))[1][1][0]
            IA = addr(item, "org.freedesktop.Secret.Item")
            def run_prompt(conn, prompt):
                rule = MatchRule(type="signal", interface="org.freedesktop.Secret.Prompt", member="Completed", path=prompt)
                conn.send_and_get_reply(message_bus.AddMatch(rule))
                with conn.filter(rule) as queue:
                    call(conn, addr(prompt, "org.freedesktop.Secret.Prompt"), "Prompt", "s", ("",))
                    return conn.recv_until_filtered(queue, timeout=60).body
            done, prompt = call(a, SERVICE, "Unlock", "ao", ([item],))[1]
            print("otherRunsIt=%s" % call(b, addr(prompt, "org.freedesktop.Secret.Prompt"), "Prompt", "s", ("",))[1])
            dismissed, result = run_prompt(a, prompt)
            print("dismissed=%s result=%s" % (dismissed, result[1] == [item]))
            print("aUnlockedList=%d" % len(call(a, SERVICE, "SearchItems", "a{ss}", ({"service": "kg-gated"},))[1][0]))
            print("bLockedList=%d" % len(call(b, SERVICE, "SearchItems", "a{ss}", ({"service": "kg-gated"},))[1][1]))
            def locked(conn): return call(conn, addr(item, "org.freedesktop.DBus.Properties"), "Get", "ss", ("org.freedesktop.Secret.Item", "Locked"))[1][0][1]
            print("aLockedProp=%s bLockedProp=%s" % (locked(a), locked(b)))
            print("bGetSecrets=%d" % len(call(b, SERVICE, "GetSecrets", "aoo", ([item], sb))[1][0]))
            print("bGetSecret=%s" % call(b, IA, "GetSecret", "o", (sb,))[1])
            got = call(a, IA, "GetSecret", "o", (sa,))
            print("aRead=%s" % bytes(got[1][0][2]).decode())
            print("aReadAgain=%s" % call(a, IA, "GetSecret", "o", (sa,))[1])
            # A Lock ends an authorization not yet used.
            done, prompt = call(a, SERVICE, "Unlock", "ao", ([item],))[1]
            run_prompt(a, prompt)
            call(a, SERVICE, "Lock", "ao", ([item],))
            print("afterLock=%s" % call(a, IA, "GetSecret", "o", (sa,))[1])
            """#)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["otherRunsIt"], "org.freedesktop.Secret.Error.NoSuchObject", "a prompt is its connection's own: \(r.summary)")
        XCTAssertTrue(r.out.contains("dismissed=False result=True"), r.summary)
        XCTAssertEqual(v["aUnlockedList"], "1", r.summary)
        XCTAssertEqual(v["bLockedList"], "1", "another connection still sees it locked: \(r.summary)")
        XCTAssertTrue(r.out.contains("aLockedProp=False bLockedProp=True"), "each connection's view of Locked: \(r.summary)")
        r.assertValues(["bGetSecrets": "0", "bGetSecret": "org.freedesktop.Secret.Error.IsLocked", "aRead": "GATED-SECRET-5e1"])
        XCTAssertEqual(v["aReadAgain"], "org.freedesktop.Secret.Error.IsLocked", "once: the next read asks again: \(r.summary)")
        XCTAssertEqual(v["afterLock"], "org.freedesktop.Secret.Error.IsLocked", r.summary)
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    /// python SecretStorage's unlock() and get_secret() of a gated item: the prompt, then the secret;
    /// a second get_secret() without an unlock gets none.
    func test_pythonSecretStorage_unlockThenGetSecret_ofAGatedItem() throws {
        let h = try harness()
        try h.writeUserFile("ss.py", """
            import secretstorage
            c = secretstorage.dbus_init()
            item = next(secretstorage.search_items(c, {"service": "kg-gated"}))
            print("locked=%s" % item.is_locked())
            print("dismissed=%s" % item.unlock())
            print("secret=%s" % item.get_secret().decode())
            try:
                item.get_secret(); print("second=read")
            except secretstorage.exceptions.LockedException:
                print("second=locked")
            """, mode: 0o600)
        let r = try run(h, shell: Self.addGated + "\np0=$(asked)\n/usr/bin/python3 \"$HOME/ss.py\" 2>&1\necho asks=$(( $(asked) - p0 ))")
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        r.assertValues(["locked": "True", "dismissed": "False", "secret": "GATED-SECRET-5e1", "second": "locked", "asks": "1"])
    }

    /// A client that leaves while its gated item's prompt is asking cancels it: the answer typed
    /// afterwards opens nothing, and the daemon answers everyone meanwhile.
    func test_aClientThatLeavesMidPrompt_cancelsTheAuthentication() throws {
        let h = try harness()
        // The person takes 3 s to answer; the client is gone after 1.
        try h.writeUserFile("slow-askpass", """
            #!/bin/sh
            echo prompt >> "$HOME/prompts"
            sleep 3
            echo answered >> "$HOME/slow-answered"
            cat "$HOME/answer"
            """, mode: 0o700)
        let auditBefore = auditLines(h).count
        let r = try run(h, shell: Self.addGated, python: #"""
            a = open_dbus_connection(bus="SESSION")
            item = call(a, SERVICE, "SearchItems", "a{ss}", ({"service": "kg-gated"},))[1][1][0]
            done, prompt = call(a, SERVICE, "Unlock", "ao", ([item],))[1]
            print("prompted=%s" % call(a, addr(prompt, "org.freedesktop.Secret.Prompt"), "Prompt", "s", ("",))[0])
            time.sleep(1); a.close()
            b = open_dbus_connection(bus="SESSION")
            print("meanwhile=%s" % call(b, SERVICE, "SearchItems", "a{ss}", ({"service": "kg-open"},))[0])
            time.sleep(5)
            print("answeredLate=%s" % os.path.exists(os.path.expanduser("~/slow-answered")))
            """#, environment: ["KEYGATE_ASKPASS": h.user.home + "/slow-askpass"])
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["prompted"], "ok", r.summary)
        XCTAssertEqual(v["meanwhile"], "ok", r.summary)
        XCTAssertEqual(v["answeredLate"], "True", "the person answered after the client left: \(r.summary)")
        XCTAssertTrue(r.out.contains("was dismissed"), "the daemon's log says the prompt ended dismissed: \(r.summary)")
        let granted = auditLines(h).dropFirst(auditBefore).filter { $0.contains("service=kg-gated") && $0.contains("result=granted") }
        XCTAssertEqual(granted, [], "the gatekeeper opened nothing: the cancel reached PAM: \(auditLines(h).suffix(8))")
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    /// A same-user attacker, after the person has just answered a prompt for the gated item: it
    /// replaces the daemon (--replace, its own copy with an askpass that types a wrong password),
    /// then kills that one and takes the bus name itself. It gets what gnome-keyring gives (the
    /// ungated item of the open keychain) and never the gated one: the person's answer left no
    /// window, its daemon's prompt fails at PAM, the CLI without the person is refused, and the
    /// file, copied elsewhere, holds neither the secret nor a client's gated label.
    func test_aSameUserProcessThatReplacesOrKillsTheDaemon_andTakesTheName_getsNoGatedItemWithoutThePerson() throws {
        // A user of its own: the wrong password counts toward its lockout.
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service at \(PackagePaths.secretServiceBinary) (run swift build)")
        let h = try CLIUserHarness()
        try h.writeUserFile("gate-askpass", "#!/bin/sh\necho prompt >> \"$HOME/prompts\"\ncat \"$HOME/answer\"\n", mode: 0o700)
        try h.writeUserFile("wrong-askpass", "#!/bin/sh\necho prompt >> \"$HOME/wrong-prompts\"\necho not-the-password\n", mode: 0o700)
        let root = try h.policyRoot(["20-clients.policy": "[secret-service \"*\" attribute \"app=kg-policy\"]\naccess = user-presence\n"],
                                    for: self)
        let r = try run(h, shell: Self.addGated + """
            printf %s 'CLIENT-SECRET-77a' | secret-tool store --label='CLIENT-LABEL-9d' app kg-policy; echo store=$?
            p0=$(asked)
            echo legit=[$(secret-tool lookup service kg-gated account bob)]
            echo legitAsks=$(( $(asked) - p0 ))
            KEYGATE_ASKPASS= keygate get -s kg-gated -a bob >"$HOME/w.out" 2>/dev/null; echo noWindow=$?
            echo noWindowOut=[$(cat "$HOME/w.out")]
            # The attacker's daemon replaces the running one.
            KEYGATE_ASKPASS="$HOME/wrong-askpass" "$KEYGATE_SECRET_SERVICE" --replace </dev/null >>"$HOME/attacker.log" 2>&1 &
            attacker=$!
            for i in $(seq 100); do kill -0 "$KEYGATE_SECRET_SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
            echo legitGone=$(kill -0 "$KEYGATE_SECRET_SERVICE_PID" 2>/dev/null && echo no || echo yes)
            echo viaAttacker=[$(secret-tool lookup service kg-gated account bob)]
            echo viaAttackerClient=[$(secret-tool lookup app kg-policy)]
            echo wrongAsks=$(wc -l < "$HOME/wrong-prompts")
            echo personAsks=$(( $(asked) - p0 ))
            # Then it kills its daemon, and python takes the name itself.
            kill -KILL "$attacker"; wait "$attacker" 2>/dev/null
            echo '--- attacker daemon log'; cat "$HOME/attacker.log"
            """, python: #"""
            import subprocess, glob
            from jeepney.bus_messages import message_bus
            bus = open_dbus_connection(bus="SESSION")
            for _ in range(200):
                owned = bus.send_and_get_reply(message_bus.RequestName(NAME, 4)).body[0]
                if owned == 1: break
                time.sleep(0.05)
            print("impostorOwns=%d" % owned)
            env = dict(os.environ); env["KEYGATE_ASKPASS"] = ""
            def kg(*args):
                p = subprocess.run(["keygate"] + list(args), env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
                return p.returncode, p.stdout.decode(errors="replace").strip()
            rc, out = kg("get", "-s", "kg-gated", "-a", "bob")
            print("impostorGated=%d [%s]" % (rc, out))
            rc, out = kg("lookup", "app", "kg-policy")
            print("impostorClientGated=%d [%s]" % (rc, out))
            rc, out = kg("get", "-s", "kg-open", "-a", "bob")
            print("impostorOpen=[%s]" % out)
            # The file, copied elsewhere.
            copy = os.path.expanduser("~/elsewhere"); os.makedirs(copy, exist_ok=True)
            data = b""
            for f in glob.glob(os.path.expanduser("~/.local/share/keygate/items.sqlite*")):
                target = os.path.join(copy, os.path.basename(f))
                with open(f, "rb") as src, open(target, "wb") as dst: dst.write(src.read())
                data += open(target, "rb").read()
            print("copied=%d" % len(data))
            for name, text in [("plainGated", b"GATED-SECRET-5e1"), ("plainClientSecret", b"CLIENT-SECRET-77a"),
                               ("plainClientLabel", b"CLIENT-LABEL-9d"), ("plainOpen", b"OPEN-SECRET-22")]:
                print("%s=%d" % (name, data.count(text)))
            """#, environment: ["KEYGATE_ASKPASS": h.user.home + "/gate-askpass", "KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["store"], "0", r.summary)
        XCTAssertEqual(v["legit"], "[GATED-SECRET-5e1]", "the person answered the real daemon's prompt: \(r.summary)")
        XCTAssertEqual(v["legitAsks"], "1", r.summary)
        XCTAssertEqual(v["noWindow"], "36", "the person's answer left no window: the CLI needs the person again: \(r.summary)")
        XCTAssertEqual(v["noWindowOut"], "[]", r.summary)
        XCTAssertEqual(v["legitGone"], "yes", "--replace took the name from the running daemon: \(r.summary)")
        XCTAssertEqual(v["viaAttacker"], "[]", "the attacker's daemon asked PAM and failed: \(r.summary)")
        XCTAssertEqual(v["viaAttackerClient"], "[]", r.summary)
        XCTAssertGreaterThanOrEqual(Int(v["wrongAsks"] ?? "") ?? 0, 2, "its prompts reached its askpass, each read: \(r.summary)")
        XCTAssertEqual(v["personAsks"], "1", "the person's askpass was never reached by the attacker: \(r.summary)")
        XCTAssertEqual(v["impostorOwns"], "1", "the impostor owns org.freedesktop.secrets: \(r.summary)")
        XCTAssertEqual(v["impostorGated"]?.hasSuffix(" []"), true, "no gated secret without the person: \(r.summary)")
        XCTAssertNotEqual(v["impostorGated"]?.hasPrefix("0 "), true, r.summary)
        XCTAssertEqual(v["impostorClientGated"]?.hasSuffix(" []"), true, r.summary)
        XCTAssertNotEqual(v["impostorClientGated"]?.hasPrefix("0 "), true, r.summary)
        XCTAssertEqual(v["impostorOpen"], "[OPEN-SECRET-22]", "what gnome-keyring gives: the ungated item of the open keychain: \(r.summary)")
        XCTAssertGreaterThan(Int(v["copied"] ?? "") ?? 0, 0, r.summary)
        for key in ["plainGated", "plainClientSecret", "plainClientLabel", "plainOpen"] {
            XCTAssertEqual(v[key], "0", "\(key): the copied file holds no such plaintext: \(r.summary)")
        }
        XCTAssertEqual(r.out.components(separatedBy: "GATED-SECRET-5e1").count, 2, "the gated secret came out once, to the person's read: \(r.summary)")
    }

    /// An item a Secret Service client stores gets the access root's [secret-service] section gives
    /// it: user presence for app=kg-policy. Its label lists with no prompt while the keychain is
    /// open, each read asks the person, the file holds neither its secret nor its label, and
    /// `keygate policy explain --secret-service` says where its access came from. Another client
    /// item the section does not match is none, as every provider gives.
    func test_aClientItemThePolicyGates_asksThePersonOnEveryRead_andTheFileHoldsNoPlaintextOfIt() throws {
        let h = try harness()
        let root = try h.policyRoot(["20-clients.policy": "[secret-service \"*\" attribute \"app=kg-policy\"]\naccess = user-presence\n"],
                                    for: self)
        let r = try run(h, shell: """
            keygate policy explain --secret-service app=kg-policy > "$HOME/explain.out" 2>&1; echo explain=$?
            echo explainAccess=$(grep -c '^  access .*user-presence' "$HOME/explain.out")
            echo explainOrigin=$(grep -c '20-clients.policy' "$HOME/explain.out")
            echo explainOther=$(keygate policy explain --secret-service app=other 2>&1 | grep '^  access' | awk '{print $2}')
            printf %s 'CLIENT-SECRET-77a' | secret-tool store --label='CLIENT-LABEL-9d' app kg-policy; echo store=$?
            printf %s 'PLAIN-SECRET-31' | secret-tool store --label='PLAIN-LABEL-2b' app kg-plain; echo storePlain=$?
            p0=$(asked)
            echo listed=$(secret-tool search app kg-policy 2>/dev/null | grep -c '^label = CLIENT-LABEL-9d')
            p1=$(asked)
            echo first=[$(secret-tool lookup app kg-policy)]
            p2=$(asked)
            echo second=[$(secret-tool lookup app kg-policy)]
            p3=$(asked)
            echo plain=[$(secret-tool lookup app kg-plain)]
            p4=$(asked)
            echo asks=$((p1 - p0)),$((p2 - p1)),$((p3 - p2)),$((p4 - p3))
            db="$HOME/.local/share/keygate/items.sqlite"
            echo plainSecret=$(cat "$db"* | grep -ac 'CLIENT-SECRET-77a')
            echo plainLabel=$(cat "$db"* | grep -ac 'CLIENT-LABEL-9d')
            echo ungatedLabel=$(cat "$db"* | grep -ac 'PLAIN-LABEL-2b')
            """, environment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["explain"], "0", r.summary)
        XCTAssertEqual(v["explainAccess"], "1", "explain shows the section's access: \(r.summary)")
        XCTAssertNotEqual(v["explainOrigin"], "0", "and the file it came from: \(r.summary)")
        XCTAssertEqual(v["explainOther"], "none", "an item no section matches: none: \(r.summary)")
        XCTAssertEqual(v["store"], "0", r.summary)
        XCTAssertEqual(v["storePlain"], "0", r.summary)
        XCTAssertEqual(v["listed"], "1", "the label lists, with no prompt, while the keychain is open: \(r.summary)")
        r.assertValues(["first": "[CLIENT-SECRET-77a]", "second": "[CLIENT-SECRET-77a]", "plain": "[PLAIN-SECRET-31]"])
        XCTAssertEqual(v["asks"], "0,1,1,0", "each read of the gated client item asked, nothing else did: \(r.summary)")
        XCTAssertEqual(v["plainSecret"], "0", "no plaintext secret in the file: \(r.summary)")
        XCTAssertEqual(v["plainLabel"], "0", "no plaintext label of a gated item in the file: \(r.summary)")
        XCTAssertNotEqual(v["ungatedLabel"], "0", "an ungated item's label is stored as text (the grep finds what is there): \(r.summary)")
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    /// The gatekeeper refuses an unrecorded presence that carries what would read or leave a
    /// record (fresh, a wish for a handle, unlocking keys), sent as raw frames by a process of the
    /// user; and an unrecorded presence never reads the window a recorded one left: right after
    /// the CLI's read, the plain presence with no prompt is granted from the window, the
    /// unrecorded one with no prompt is refused (it needs the person, and nobody can be asked).
    func test_theGatekeeperRefusesAnUnrecordedPresence_forgedToReuseOrLeaveARecord() throws {
        let h = try harness()
        let presence = GateRawClient.Op.presence, noPrompt = GateRawClient.noPrompt
        let r = try run(h, shell: GateRawClient.install + "\n" + Self.addGated + """
            keygate get -s kg-gated -a bob >/dev/null 2>&1; echo get=$?
            gate window \(presence) \(noPrompt) service=kg-gated account=bob
            gate unrecorded \(presence) \(noPrompt | 128) service=kg-gated account=bob
            gate withFresh \(presence) \(2 | 128) service=kg-gated account=bob
            gate withHandleWish \(presence) \(4 | 128) service=kg-gated account=bob
            gate withUnlocking \(presence) \(64 | 128) key=1:41 service=kg-gated account=bob
            gate onValidate \(GateRawClient.Op.validate) 128
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["get"], "0", "the CLI's read took the password and left a window: \(r.summary)")
        XCTAssertEqual(v["window.status"], "0", "the plain presence is granted from the window (the control): \(r.summary)")
        XCTAssertEqual(v["unrecorded.status"], GateRawClient.interactionNotAllowed,
                       "an unrecorded presence reads no window: it needs the person: \(r.summary)")
        for name in ["withFresh", "withHandleWish", "withUnlocking", "onValidate"] {
            XCTAssertEqual(v["\(name).status"], "-50", "\(name): refused as malformed (errSecParam): \(r.summary)")
            XCTAssertTrue(v["\(name).message"]?.contains("refused a malformed request") == true, "\(name): says so: \(r.summary)")
        }
    }

    /// A biometry-any item read through secret-tool asks for a finger, through the gatekeeper's
    /// pam_fprintd (real fprintd with libfprint's virtual reader on a private system bus), on
    /// every read: the enrolled finger opens it each time, another finger and no finger give
    /// nothing, and the password the askpass would type is never asked for.
    func test_aBiometryItem_asksForTheFingerThroughFprintd_onEveryRead() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.secretServiceBinary),
                                "the built keygate-secret-service at \(PackagePaths.secretServiceBinary) (run swift build)")
        let fprint = try FprintSession()
        fprintSession = fprint
        // A user of its own: failed matches count toward its biometric lockout.
        let h = try CLIUserHarness()
        let stack = "auth required pam_fprintd.so max-tries=1 timeout=8\naccount required pam_unix.so\n"
        try stack.write(toFile: h.confdir + "/keygate-biometry", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: h.confdir + "/keygate-biometry")
        try fprint.enroll(h.user.name, as: "finger-a")
        fprint.serveFingerRequests(in: h.user.home)
        try h.writeUserFile("gate-askpass", "#!/bin/sh\necho prompt >> \"$HOME/prompts\"\ncat \"$HOME/answer\"\n", mode: 0o700)
        let auditBefore = auditLines(h).count
        var environment = fprint.gatekeeperEnvironment
        environment["KEYGATE_ASKPASS"] = h.user.home + "/gate-askpass"
        let r = try run(h, shell: FprintSession.fingerFunction + "\n" + """
            printf %s 'FINGER-SECRET-0f' | keygate add -s kg-finger -a bob --access biometry-any >/dev/null 2>&1; echo add=$?
            p0=$(asked)
            finger finger-a
            echo right=[$(secret-tool lookup service kg-finger account bob)]
            echo rightAgain=[$(secret-tool lookup service kg-finger account bob)]
            finger finger-b
            echo wrong=[$(secret-tool lookup service kg-finger account bob)]
            finger none
            echo noFinger=[$(secret-tool lookup service kg-finger account bob)]
            echo passwordAsks=$(( $(asked) - p0 ))
            """, environment: environment)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["add"], "0", r.summary)
        if v["right"] != "[FINGER-SECRET-0f]" { print(fprint.postMortem()) }
        XCTAssertEqual(v["right"], "[FINGER-SECRET-0f]", "the enrolled finger opens it: \(r.summary)")
        XCTAssertEqual(v["rightAgain"], "[FINGER-SECRET-0f]", r.summary)
        XCTAssertEqual(v["wrong"], "[]", "another finger gives nothing: \(r.summary)")
        XCTAssertEqual(v["noFinger"], "[]", "no finger gives nothing: \(r.summary)")
        XCTAssertEqual(v["passwordAsks"], "0", "the item asks for a finger, never the password: \(r.summary)")
        let opens = auditLines(h).dropFirst(auditBefore).filter { $0.contains("op=open") && $0.contains("service=kg-finger") }
        XCTAssertEqual(opens.filter { $0.contains("result=granted") && $0.contains("recorded=no") }.count, 2,
                       "each granted read was its own unrecorded authentication: \(opens)")
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    /// Keygate's own item sealed with no access, which root's floor (`minimum-access`) later
    /// raised to user presence: the CLI asks for the person at each read, and this door never
    /// gives it out with the cached keys (it is not opened through a prompt either: it fails
    /// closed, and SECRET_SERVICE.md says to read it with keygate).
    func test_anItemAnAdminFloorRaised_isNeverGivenOutWithoutThePerson() throws {
        let h = try harness()
        let r0 = try run(h, shell: """
            printf %s 'FLOORED-SECRET-6d' | keygate add -s kg-floored -a bob --access none >/dev/null 2>&1; echo add=$?
            echo before=[$(secret-tool lookup service kg-floored account bob)]
            """)
        XCTAssertEqual(r0.values["add"], "0", r0.summary)
        XCTAssertEqual(r0.values["before"], "[FLOORED-SECRET-6d]", "with no floor, an ungated item reads as on any provider: \(r0.summary)")
        let root = try h.policyRoot(["20-floor.policy": "[service \"kg-floored\"]\nminimum-access = user-presence\n"], for: self)
        let r = try run(h, shell: """
            p0=$(asked)
            echo viaTool=[$(secret-tool lookup service kg-floored account bob 2>/dev/null)]
            echo toolAsks=$(( $(asked) - p0 ))
            p1=$(asked)
            echo viaCLI=[$(keygate get -s kg-floored -a bob 2>/dev/null)]
            echo cliAsks=$(( $(asked) - p1 ))
            """, environment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        XCTAssertEqual(v["viaTool"], "[]", "the floor holds through this door: \(r.summary)")
        XCTAssertEqual(v["toolAsks"], "0", r.summary)
        XCTAssertEqual(v["viaCLI"], "[FLOORED-SECRET-6d]", "the CLI reads it with the person: \(r.summary)")
        XCTAssertEqual(v["cliAsks"], "1", r.summary)
        XCTAssertEqual(v["daemon-alive"], "yes", r.summary)
    }

    /// A daemon with no way to ask the person (no askpass, no display for a pinentry) completes a
    /// gated item's prompt as dismissed at once: the client gets nothing, and never hangs.
    func test_withNoWayToAsk_aGatedItemsPromptIsDismissedAtOnce_neverAHang() throws {
        let h = try harness()
        let r = try run(h, shell: Self.addGated + """
            env -u KEYGATE_ASKPASS -u DISPLAY -u WAYLAND_DISPLAY "$KEYGATE_SECRET_SERVICE" --replace </dev/null >>"$HOME/mute.log" 2>&1 &
            mute=$!
            for i in $(seq 100); do kill -0 "$KEYGATE_SECRET_SERVICE_PID" 2>/dev/null || break; sleep 0.1; done
            p0=$(asked)
            start=$(date +%s%N)
            echo lookup=[$(timeout 30 secret-tool lookup service kg-gated account bob 2>/dev/null)]
            echo millis=$(( ($(date +%s%N) - start) / 1000000 ))
            echo asks=$(( $(asked) - p0 ))
            echo openStill=[$(secret-tool lookup service kg-open account bob)]
            kill "$mute"; wait "$mute" 2>/dev/null
            echo '--- mute daemon log'; cat "$HOME/mute.log"
            """)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        XCTAssertEqual(v["lookup"], "[]", r.summary)
        XCTAssertLessThan(Int(v["millis"] ?? "") ?? .max, 5000, "dismissed at once: \(r.summary)")
        XCTAssertEqual(v["asks"], "0", r.summary)
        XCTAssertEqual(v["openStill"], "[OPEN-SECRET-22]", "the ungated item needs nobody: \(r.summary)")
        XCTAssertTrue(r.out.contains("was dismissed at once"), "the daemon's log says why: \(r.summary)")
    }

    /// Keygate's own gated item, made with the CLI: its label is sealed in the daemon's file, and
    /// its `Label` is the real one while the keychain is open, "(locked)" while it is locked, the
    /// real one again once the person unlocks it (the password, through the askpass). No prompt
    /// for a listing.
    func test_keygatesOwnGatedItem_hasItsRealLabel_whileUnlocked_andNoPlaintextOfItInTheFile() throws {
        let h = try harness()
        let r = try run(h, shell: Self.addGated + """
            p0=$(asked)
            echo unlocked=$(secret-tool search --all service kg-gated 2>/dev/null | grep -c '^label = GATED-LABEL-c4$')
            keygate lock >/dev/null; echo lock=$?
            sleep 0.3
            secret-tool search --all service kg-gated > "$HOME/locked.out" 2>&1
            echo lockedLabel=$(grep -c '^label = (locked)$' "$HOME/locked.out")
            echo lockedLeak=$(grep -c 'GATED-LABEL-c4' "$HOME/locked.out")
            p1=$(asked)
            keygate unlock </dev/null >/dev/null 2>&1; echo unlock=$?
            p2=$(asked)
            sleep 0.3
            echo again=$(secret-tool search --all service kg-gated 2>/dev/null | grep -c '^label = GATED-LABEL-c4$')
            p3=$(asked)
            echo asks=$((p1 - p0)),$((p2 - p1)),$((p3 - p2))
            db="$HOME/.local/share/keygate/items.sqlite"
            echo plainLabel=$(cat "$db"* | grep -ac 'GATED-LABEL-c4')
            """)
        XCTAssertNil(r.values["init-failed"], r.summary)
        r.assertValues([
            "add": "0", "lock": "0", "unlock": "0", "daemon-alive": "yes",
            "unlocked": "1",                        // the real label while the keychain is open, with no prompt;
            "lockedLabel": "1", "lockedLeak": "0",  // locked: "(locked)", and no label text;
            "again": "1",                           // the real label once the person unlocked
            "asks": "0,1,0",                        // only the unlock asked
            "plainLabel": "0",                      // no plaintext of the label in the file
        ])
    }
}
