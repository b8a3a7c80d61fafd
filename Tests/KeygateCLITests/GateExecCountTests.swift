// How many times one command starts the setuid gatekeeper, counted by a stand-in that records
// each start and then execs the real one (same pid, so the gatekeeper's caller is still the
// user's keygate): the built keygate as a created user, real pam_unix. On a locked keychain a
// read, `keygate unlock` and `keygate validate` each start it once: the authentication's own run
// seals the class keys and arms the finger unlock (the `unlocking` flag), with no `certify` or
// `fingerUnlockArm` run of their own after it. fprintd's print folder is an empty one
// here, so the finger unlock is in play (armed with nothing: no finger enrolled).
import Foundation
import KeygateTestSupport
import XCTest

final class GateExecCountTests: XCTestCase {
    private func harness() throws -> (CLIUserHarness, [String: String]) {
        let h = try CLIUserHarness()
        let staged = try h.run("dirname \"$(command -v keygate)\"").out.trimmingCharacters(in: .whitespacesAndNewlines)
        try h.writeUserFile("counting-gatekeeper", """
            #!/bin/sh
            echo start >> "$HOME/gatekeeper-starts"
            exec \(staged)/keygate-gatekeeper "$@"
            """, mode: 0o700)
        let prints = h.user.home + "/no-prints"
        _ = try h.run("mkdir -p \(prints)")
        return (h, ["KEYGATE_TEST_GATEKEEPER": h.user.home + "/counting-gatekeeper", "KEYGATE_TEST_FPRINT_DIR": prints,
                    "KEYGATE_TEST_REUSE_DURATION": "0"])
    }

    /// The starts of the gatekeeper `step` made, after `setup` (not counted).
    private func starts(_ h: CLIUserHarness, _ env: [String: String], setup: String, step: String,
                        file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let r = try h.run("""
            \(setup)
            : > "$HOME/gatekeeper-starts"
            \(step); echo step=$?
            echo starts=$(wc -l < "$HOME/gatekeeper-starts" | tr -d ' ')
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["step"], "0", r.summary, file: file, line: line)
        return Int(r.values["starts"] ?? "") ?? -1
    }

    func test_onALockedKeychain_aReadUnlockAndValidate_eachStartTheGatekeeperOnce() throws {
        let (h, env) = try harness()
        let add = try h.run("""
            printf %s plain | keygate add -s plain -a a --access none; echo a1=$?
            printf %s gated | keygate add -s gated -a a --access user-presence; echo a2=$?
            """, extraEnvironment: env)
        XCTAssertEqual(add.values["a1"], "0", add.summary)
        XCTAssertEqual(add.values["a2"], "0", add.summary)

        let plain = try starts(h, env, setup: "keygate lock", step: "keygate get -s plain -a a >/dev/null")
        let gated = try starts(h, env, setup: "keygate lock", step: "keygate get -s gated -a a >/dev/null")
        let unlock = try starts(h, env, setup: "keygate lock", step: "keygate unlock")
        let validate = try starts(h, env, setup: "keygate lock", step: "keygate validate")
        print("gatekeeper starts on a locked keychain: plain read \(plain), gated read \(gated), unlock \(unlock), validate \(validate)")
        XCTAssertEqual(plain, 1, "a plain item's read: the unlock, with its seals and arming in the same run")
        XCTAssertEqual(gated, 1, "a user-presence read: the item's password opens the keychain, one run")
        XCTAssertEqual(unlock, 1)
        XCTAssertEqual(validate, 1)

        // That one run leaves all a `certify` and a `fingerUnlockArm` run would: the seals (an add
        // of a gated item needs no prompt and no unlock) and the unlocked keychain.
        let asked = try h.promptCount()
        let after = try h.run("""
            printf %s more | keygate add -s more -a a --access user-presence; echo add=$?
            """, extraEnvironment: env)
        XCTAssertEqual(after.values["add"], "0", after.summary)
        XCTAssertEqual(try h.promptCount(), asked, "the class keys were sealed in the unlock's run: \(h.prompts())")
    }

    /// keys.json replaced by another keychain's public keys: the seals the authentication's run
    /// made are for keys this master key does not derive, so none is recorded for them, and a
    /// separate `certify` seals the right ones (one start more, no prompt more).
    func test_aReplacedKeysJSON_getsNoSealFromTheUnlock_andACertifyAfterIt() throws {
        let (h, env) = try harness()
        let r = try h.run("""
            printf %s v | keygate add -s a -a a --access none
            d="$HOME/.local/share/keygate"
            python3 - "$d/keys.json" <<'EOF'
            import json, sys, base64, os
            p = sys.argv[1]
            k = json.load(open(p))
            for name in k["classKeys"]:
                k["classKeys"][name] = base64.b64encode(os.urandom(32)).decode()
            k.pop("seals", None)
            json.dump(k, open(p, "w"))
            EOF
            keygate lock
            : > "$HOME/gatekeeper-starts"
            keygate unlock; echo unlock=$?
            echo starts=$(wc -l < "$HOME/gatekeeper-starts" | tr -d ' ')
            printf %s g | keygate add -s g -a a --access user-presence; echo add=$?
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["unlock"], "0", r.summary)
        XCTAssertEqual(r.values["starts"], "2", "the unlock, then certify for the keys this master key derives: \(r.summary)")
        XCTAssertEqual(r.values["add"], "0", "the right keys were sealed: \(r.summary)")
    }
}
