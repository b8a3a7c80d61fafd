// The same-user attacks on the gate keys, each as a real process of the victim's own uid (or root's
// chpasswd), against the built keygate and the built keygate-gatekeeper installed setuid
// root, with real pam_unix. Each failed against Keygate 1.x, whose gate keys lived in the
// user's kernel keyring and files; each must fail here (docs/SECURITY.md, "Same user").
import Foundation
import KeygateTestSupport
import XCTest

final class GatekeeperAttackTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.theGateItself

    /// Copies every key the user's keyring holds (name and payload) to ~/loot, as any process of the
    /// user can, from any session: `keyctl pipe` needs no terminal and no password.
    private let copyKeyring = """
        keyctl link @u @s >/dev/null 2>&1   # possess the user keyring, as the issue's attacker did
        echo link=$?
        mkdir -p "$HOME/loot"; rm -f "$HOME/loot/"*
        for id in $(keyctl rlist @u 2>/dev/null); do
            keyctl rdescribe $id | awk -F';' '{print $NF}' > "$HOME/loot/$id.name"
            keyctl pipe $id > "$HOME/loot/$id.key" 2>/dev/null || rm -f "$HOME/loot/$id.name"
        done
        cat "$HOME/loot/"*.name 2>/dev/null | sed 's/^/copied=/'
        cat /var/lib/keygate/gate/$(id -u)/secret >/dev/null 2>&1; echo gatesecret=$?
        cat /run/keygate/ts/$(id -u) >/dev/null 2>&1; echo records=$?
        """

    /// Puts every copied key back, with no timeout, under its own name.
    private let replant = """
        keyctl link @u @s >/dev/null 2>&1
        for f in "$HOME/loot/"*.name; do
            [ -e "$f" ] || continue
            keyctl padd user "$(cat "$f")" @u < "${f%.name}.key" >/dev/null
        done
        """

    func test_copyEverythingReadable_replantAfterLockAll_andAfterAPasswordChange_opensNothing() throws {
        let h = try CLIUserHarness()
        let victim = try h.run("""
            printf %s s3cret | keygate add -s vault -a a --access user-presence; echo add=$?
            printf 'get=%s\\n' "$(keygate get -s vault -a a)"
            """)
        XCTAssertEqual(victim.values["get"], "s3cret", victim.summary)
        // Another session of the same user, inside the victim's window, with no terminal and no askpass.
        let copy = try h.run(copyKeyring, askpass: false)
        XCTAssertNotEqual(copy.values["gatesecret"], "0", "root's gate secret is not readable: \(copy.summary)")
        XCTAssertNotEqual(copy.values["records"], "0", "root's records are not readable: \(copy.summary)")
        let copied = copy.out.split(separator: "\n").filter { $0.hasPrefix("copied=") }
        let keyrings = (try? h.run("keyctl show @s; keyctl rlist @u | xargs -n1 keyctl rdescribe", askpass: false))?.summary ?? ""
        XCTAssertFalse(copied.isEmpty, "the attacker did copy the user's keys: \(copy.summary)\n\(keyrings)")
        for name in copied {
            XCTAssertFalse(name.contains(":presence.") || name.contains(":current-set.") || name.hasSuffix(":device"),
                           "no gate key is ever in the user's keyring: \(name)")
        }
        _ = try h.run("keygate lock --all")
        let replanted = try h.run(replant + """

            keygate get -s vault -a a; echo get=$?
            """, askpass: false)
        XCTAssertEqual(replanted.values["get"], "36", "the replanted keys open no presence item: \(replanted.summary)")
        XCTAssertFalse(replanted.out.contains("s3cret"), replanted.summary)

        // The same after a root password change and `keygate passwd`, for an item written after it.
        let old = h.user.password, new = "new-\(UUID().uuidString.prefix(10))"
        try h.user.changePassword(to: new)
        try h.answerWith(new)
        try h.queueAnswers([new, old])
        let after = try h.run("""
            keygate passwd; echo passwd=$?
            printf %s n3w | keygate add -s vault2 -a a --access user-presence; echo add=$?
            """)
        XCTAssertEqual(after.values["passwd"], "0", after.summary)
        XCTAssertEqual(after.values["add"], "0", after.summary)
        let stolen = try h.run(replant + """

            keygate get -s vault2 -a a; echo new=$?
            keygate get -s vault -a a; echo old=$?
            """, askpass: false)
        XCTAssertEqual(stolen.values["new"], "36", stolen.summary)
        XCTAssertEqual(stolen.values["old"], "36", stolen.summary)
        XCTAssertFalse(stolen.out.contains("n3w") || stolen.out.contains("s3cret"), stolen.summary)
    }

    func test_anotherSessionDuringTheWindow_isAskedAgain() throws {
        let h = try CLIUserHarness()
        let victim = try h.run("""
            printf %s w | keygate add -s web -a a --access user-presence >/dev/null 2>&1
            keygate get -s web -a a >/dev/null; echo first=$?
            KEYGATE_ASKPASS= keygate get -s web -a a >/dev/null; echo window=$?
            """)
        XCTAssertEqual(victim.values["first"], "0", victim.summary)
        XCTAssertEqual(victim.values["window"], "0", "the victim's own scope is inside its window: \(victim.summary)")
        let other = try h.run("keygate get -s web -a a; echo get=$?", askpass: false)
        XCTAssertEqual(other.values["get"], "36", "another session has no window of its own: \(other.summary)")
        XCTAssertFalse(other.out.contains("w\n"), other.summary)
    }

    func test_aWeakerServiceNeverSatisfiesAStrongerOne() throws {
        let h = try CLIUserHarness()
        let root = try h.policyRoot(["10-prod.policy": "[service \"prod*\"]\npam-service = keygate-passcode\n"], for: self)
        let r = try h.run("""
            printf %s w | keygate add -s web -a a --access user-presence >/dev/null 2>&1
            printf %s p | keygate add -s prod-db -a a --access user-presence >/dev/null 2>&1
            keygate get -s web -a a >/dev/null; echo n1=$(wc -l < "$HOME/prompts")
            keygate get -s prod-db -a a >/dev/null; echo n2=$(wc -l < "$HOME/prompts")
            keygate get -s web -a a >/dev/null; echo n3=$(wc -l < "$HOME/prompts")
            keygate get -s prod-db -a a >/dev/null; echo n4=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        let n1 = Int(v["n1"] ?? "") ?? -1
        XCTAssertEqual(Int(v["n2"] ?? ""), n1 + 1, "prod asks through its own stack inside web's window: \(r.summary)")
        XCTAssertEqual(Int(v["n3"] ?? ""), n1 + 1, "web's window still holds: \(r.summary)")
        XCTAssertEqual(Int(v["n4"] ?? ""), n1 + 1, "and prod's own window now too: \(r.summary)")
    }

    func test_eachItemsOwnReuseDurationHolds() throws {
        let h = try CLIUserHarness()
        let root = try h.policyRoot(["10-bank.policy": "[service \"bank\"]\nreuse-duration = 3\n"], for: self)
        let r = try h.run("""
            printf %s w | keygate add -s web -a a --access user-presence >/dev/null 2>&1
            printf %s b | keygate add -s bank -a a --access user-presence >/dev/null 2>&1
            keygate get -s web -a a >/dev/null; echo n1=$(wc -l < "$HOME/prompts")
            sleep 5
            keygate get -s web -a a >/dev/null; echo n2=$(wc -l < "$HOME/prompts")
            keygate get -s bank -a a >/dev/null; echo n3=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        let n1 = Int(v["n1"] ?? "") ?? -1
        XCTAssertEqual(Int(v["n2"] ?? ""), n1, "web's default window holds after 5 s: \(r.summary)")
        XCTAssertEqual(Int(v["n3"] ?? ""), n1 + 1, "bank's 3-second window does not: asked again: \(r.summary)")
    }

    func test_deletingTheLockoutState_givesNoFreshTries() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s g | keygate add -s svc -a a --access user-presence >/dev/null 2>&1; keygate lock --all")
        try h.answerWith("wrong-password")
        let failing = try h.run("""
            keygate get -s svc -a a; echo g1=$?
            keygate get -s svc -a a; echo g2=$?
            echo before=$(wc -l < "$HOME/prompts")
            rm -f "$HOME/.local/share/keygate/lockout.json"
            rm -f /run/keygate/ts/$(id -u) 2>/dev/null; echo rm=$?
            """)
        XCTAssertNotEqual(failing.values["rm"], "0", "root's records cannot be deleted: \(failing.summary)")
        try h.answerWith(h.user.password)
        let r = try h.run("""
            keygate get -s svc -a a; echo get=$?
            echo after=$(wc -l < "$HOME/prompts")
            """)
        XCTAssertEqual(r.values["get"], "51", "still locked out: \(r.summary)")
        XCTAssertTrue(r.err.contains("too many failed attempts"), r.summary)
        XCTAssertEqual(r.values["after"], failing.values["before"], "not even asked: \(r.summary)")
    }

    func test_aSubstitutedPublicKey_isRefused_andNothingIsSealedToIt() throws {
        let h = try CLIUserHarness()
        let setup = try h.run("keygate init >/dev/null; keygate unlock; echo unlock=$?")
        XCTAssertEqual(setup.values["unlock"], "0", setup.summary)
        // Same-user malware writes its own public keys into keys.json.
        let r = try h.run("""
            python3 - "$HOME/.local/share/keygate/keys.json" <<'PY'
            import base64, json, os, sys
            path = sys.argv[1]
            keys = json.load(open(path))
            for name in ("when-unlocked", "when-unlocked-this-device-only"):
                keys["classKeys"][name] = base64.b64encode(os.urandom(32)).decode()
            json.dump(keys, open(path, "w"))
            PY
            printf %s s | keygate add -s svc -a a --access user-presence; echo add=$?
            keygate exists -s svc -a a; echo exists=$?
            """)
        XCTAssertEqual(r.values["add"], "206", "errSecParam: \(r.summary)")
        XCTAssertTrue(r.err.contains("not recorded by your keychain"), r.summary)
        XCTAssertEqual(r.values["exists"], "44", "nothing was stored: \(r.summary)")
        let repaired = try h.run("""
            keygate unlock; echo unlock=$?
            printf %s s | keygate add -s svc -a a --access user-presence; echo add=$?
            printf 'get=%s\\n' "$(keygate get -s svc -a a)"
            """)
        XCTAssertEqual(repaired.values["add"], "0", "an unlock records the right keys again: \(repaired.summary)")
        XCTAssertEqual(repaired.values["get"], "s", repaired.summary)
    }

    /// Root may have another user's class keys sealed without a password (the host protector's
    /// passwordless keychains). A user who writes that request to the setuid gatekeeper by hand,
    /// naming root or another user, is refused before any key is loaded.
    func test_aUserAskingToSealAnotherUsersKeys_isRefused() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            # Beside keygate in a test build; where make install or the .deb put it for the release pass.
            bindir="$(dirname "$(command -v keygate)")"
            for gatekeeper in "$bindir/keygate-gatekeeper" /usr/local/libexec/keygate/keygate-gatekeeper \
                              /usr/libexec/keygate/keygate-gatekeeper; do
                [ -x "$gatekeeper" ] && break
            done
            [ -u "$gatekeeper" ]; echo setuid=$?
            for subject in 0 1; do
                # 'Q' v1 certify, flags forUser|noPrompt, no item, no reason, handle, keys, boxes or seed; then the uid.
                python3 -c "import struct,sys; f=bytes([0x51,1,7,17])+bytes(4)+bytes([0])+bytes(2)+bytes(4)+bytes(4)+struct.pack('>I',$subject); \
                    sys.stdout.buffer.write(struct.pack('>I',len(f))+f)" | "$gatekeeper" > "$HOME/reply" 2>/dev/null
                echo "status$subject=$?"
                grep -qa "only root may ask the gatekeeper to seal another user's keys" "$HOME/reply"; echo "refused$subject=$?"
            done
            """)
        XCTAssertEqual(r.values["setuid"], "0", "the gatekeeper the user runs is setuid root: \(r.summary)")
        for subject in ["0", "1"] {
            XCTAssertEqual(r.values["status" + subject], "0", "the gatekeeper answered: \(r.summary)")
            XCTAssertEqual(r.values["refused" + subject], "0", "a request naming uid \(subject) is refused: \(r.summary)")
        }
    }

    func test_aRecycledPid_doesNotInheritItsPredecessorsWindow() throws {
        let h = try CLIUserHarness()
        _ = try h.run("printf %s r | KEYGATE_STORE=embedded keygate add -s svc -a a --access user-presence >/dev/null 2>&1")
        // Two runs in fresh pid namespaces give the shell the same pid (2) both times; only its start
        // time tells the second shell from the first.
        func runInNewPidNamespace() throws -> ProcessResult {
            let env = TestUser.systemEnvironment.merging([
                "KEYGATE_TEST_PAM_CONFDIR": h.confdir, "KEYGATE_TEST_KDF": "fast", "KEYGATE_STORE": "embedded",
                "KEYGATE_TEST_POLICY_ROOT": EmptyPolicyRoot.path, "KEYGATE_TEST_REUSE_SCOPE": "ppid",
            ]) { _, new in new }
            let tools = try UserSession.stageTools()
            let script = "echo shell=$$; \(tools)/keygate get -s svc -a a >/dev/null; echo get=$?; echo n=$(wc -l < \"$HOME/prompts\")"
            return try Subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "runuser", "-u", h.user.name, "--",
                                       "env", "HOME=\(h.user.home)", "KEYGATE_ASKPASS=\(h.askpass)", "bash", "-c", script],
                                      environment: env, timeout: 60)
        }
        let first = try runInNewPidNamespace()
        let second = try runInNewPidNamespace()
        XCTAssertEqual(first.values["get"], "0", first.summary)
        XCTAssertEqual(first.values["shell"], second.values["shell"], "the same pid both times: \(second.summary)")
        XCTAssertEqual(Int(second.values["n"] ?? ""), (Int(first.values["n"] ?? "") ?? -1) + 1,
                       "the recycled pid was asked again: \(first.summary)\n\(second.summary)")
    }

    /// `validate` extends a window and is never a password: after a password read, past the minute
    /// that certify and fingerUnlockArm allow, a process of the user's scope runs validate with no
    /// prompt (granted: the window is open), then asks, through raw request frames, for a new
    /// finger-unlock pair and for root's seal on a class key of its choosing (32 bytes of 0x41).
    /// Both stay refused: they read the time of the password itself, which validate never moves.
    /// The release pass runs it in real time (66 s); a test-hook build shortens the minute to 3 s
    /// (KEYGATE_TEST_CERTIFY_WINDOW), unless KEYGATE_TEST_REAL_CERTIFY_WINDOW is set in the suite's environment.
    func test_validate_isNotAPassword_forFingerUnlockArmOrCertify() throws {
        let h = try CLIUserHarness()
        let realTime = !BuiltGatekeeper.isBesideTheBuild || ProcessInfo.processInfo.environment["KEYGATE_TEST_REAL_CERTIFY_WINDOW"] != nil
        let minute = realTime ? 60 : 3
        let env = realTime ? [:] : ["KEYGATE_TEST_CERTIFY_WINDOW": "\(minute)"]
        let noPrompt = GateRawClient.noPrompt
        let r = try h.run(GateRawClient.install + """

            printf %s s3cret | keygate add -s svc -a acct --access user-presence >/dev/null 2>&1; echo add=$?
            keygate get -s svc -a acct >/dev/null; echo get=$?
            sleep \(minute + 6)
            gate arm1 \(GateRawClient.Op.fingerUnlockArm) \(noPrompt)
            gate certify1 \(GateRawClient.Op.certify) \(noPrompt) key=1:41
            gate validate \(GateRawClient.Op.validate) \(noPrompt)
            gate arm2 \(GateRawClient.Op.fingerUnlockArm) \(noPrompt)
            gate certify2 \(GateRawClient.Op.certify) \(noPrompt) key=1:41
            KEYGATE_ASKPASS= keygate get -s svc -a acct >/dev/null 2>&1; echo window=$?
            """, extraEnvironment: env, timeout: 240)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["get"], "0", "the read took the password: \(r.summary)")
        XCTAssertEqual(v["arm1.status"], GateRawClient.interactionNotAllowed, "\(minute + 6) s after the password: \(r.summary)")
        XCTAssertEqual(v["certify1.status"], GateRawClient.interactionNotAllowed, r.summary)
        XCTAssertEqual(v["validate.status"], "0", "validate extends the open window with no prompt: \(r.summary)")
        XCTAssertEqual(v["arm2.status"], GateRawClient.interactionNotAllowed, "validate is not a password unlock: \(r.summary)")
        XCTAssertTrue(v["arm2.message"]?.contains("a finger may reopen the keychain only after a password unlock") == true, r.summary)
        XCTAssertEqual(v["certify2.status"], GateRawClient.interactionNotAllowed,
                       "root seals no key of the caller's choosing after a validate: \(r.summary)")
        XCTAssertEqual(v["window"], "0", "the window validate extended still reads without a prompt: \(r.summary)")
    }
}
