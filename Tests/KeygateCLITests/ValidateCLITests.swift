// `keygate validate` and `keygate -v` (sudo's habits): no secret is read; the
// gatekeeper (root) extends this scope's presence window from now, or authenticates and opens
// it, and a locked keychain opens with the same password. Real processes of a fresh user, the
// built keygate and keygate-gatekeeper installed setuid root, real pam_unix; the window is
// shortened with the test hooks (KEYGATE_TEST_REUSE_DURATION) so that "extended" is measured.
// The typed flow at a terminal is TerminalCLITests.test_validate_releaseStyle_….
import Foundation
import KeygateTestSupport
import XCTest

final class ValidateCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    /// A window of `window` seconds, a gated item, and the prompts counted.
    private func harness(window: Int) throws -> (CLIUserHarness, [String: String]) {
        let h = try CLIUserHarness()
        let env = ["KEYGATE_TEST_REUSE_DURATION": "\(window)"]
        let made = try h.run("""
            keygate init >/dev/null 2>&1; echo init=$?
            printf %s 'sign-key' | keygate add -s signing -a release --access user-presence 2>/dev/null; echo add=$?
            """, extraEnvironment: env)
        XCTAssertEqual(made.values["init"], "0", made.summary)
        XCTAssertEqual(made.values["add"], "0", made.summary)
        return (h, env)
    }

    func test_validate_insideTheWindow_extendsItFromNow_withoutAPrompt() throws {
        let (h, env) = try harness(window: 6)
        let before = try h.promptCount()
        // t=0 the read asks; t=4 validate extends (no prompt); t=8 the read is past the first
        // window but inside the extended one; t=12 both have ended and the read asks again. The
        // sleeps are lower bounds (a slow command only moves the later reads later), so the last
        // read comes at least 2 s after the extended window's end, as the second read comes at
        // least 2 s after the first window's; the window clock counts whole seconds.
        let r = try h.run("""
            keygate get -s signing -a release >/dev/null 2>&1; echo first=$?; echo asked1=$(wc -l < "$HOME/prompts")
            sleep 4
            keygate validate 2> "$HOME/validate.err"; echo validate=$?; echo asked2=$(wc -l < "$HOME/prompts")
            sleep 4
            v=$(keygate get -s signing -a release); echo second=$?; echo value=$v; echo asked3=$(wc -l < "$HOME/prompts")
            sleep 4
            keygate get -s signing -a release >/dev/null 2>&1; echo third=$?; echo asked4=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["first"], "0", r.summary)
        XCTAssertEqual(r.values["asked1"], "\(before + 1)", "the first read asks: \(r.summary)")
        XCTAssertEqual(r.values["validate"], "0", r.summary)
        XCTAssertEqual(r.values["asked2"], "\(before + 1)", "validate inside the window asks nothing: \(h.prompts())")
        XCTAssertEqual(r.values["second"], "0", r.summary)
        XCTAssertEqual(r.values["value"], "sign-key", r.summary)
        XCTAssertEqual(r.values["asked3"], "\(before + 1)", "8 s after the password, 4 s after validate: no prompt: \(h.prompts())")
        XCTAssertEqual(r.values["asked4"], "\(before + 2)", "after the extended window the read asks again: \(h.prompts())")
        let said = (try? String(contentsOfFile: h.user.home + "/validate.err", encoding: .utf8)) ?? ""
        XCTAssertEqual(said, """
            keygate: items that need your password read without asking in this login session for 6 s; `keygate lock` ends it

            """, "no terminal here: the tty scope is the session")
    }

    func test_validate_onALockedKeychain_asksOnce_andTheReadsAfterItDoNot() throws {
        let (h, env) = try harness(window: 300)
        let r = try h.run("""
            keygate lock; echo lock=$?
            before=$(wc -l < "$HOME/prompts")
            keygate validate 2>/dev/null; echo validate=$?
            echo validateAsked=$(( $(wc -l < "$HOME/prompts") - before ))
            keygate status | grep '^state:'
            v=$(keygate get -s signing -a release); echo get=$?; echo value=$v
            keygate -v 2>/dev/null; echo dashV=$?
            echo totalAsked=$(( $(wc -l < "$HOME/prompts") - before ))
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["lock"], "0", r.summary)
        XCTAssertEqual(r.values["validate"], "0", r.summary)
        XCTAssertEqual(r.values["validateAsked"], "1", "one password opens the window and the keychain: \(h.prompts())")
        XCTAssertTrue(r.out.contains("state: unlocked"), r.summary)
        XCTAssertEqual(r.values["get"], "0", r.summary)
        XCTAssertEqual(r.values["value"], "sign-key", r.summary)
        XCTAssertEqual(r.values["dashV"], "0", r.summary)
        XCTAssertEqual(r.values["totalAsked"], "1", "the read and -v inside the window ask nothing: \(h.prompts())")
        XCTAssertTrue(h.prompts().contains("validate: let items that need your password read without asking"), h.prompts())
    }

    /// The window is the caller's scope: another session (setsid) has none, and validating there
    /// with no way to prompt opens none.
    func test_validate_opensTheCallersScopeOnly() throws {
        let (h, env) = try harness(window: 300)
        let r = try h.run("""
            keygate lock >/dev/null 2>&1
            keygate validate 2>/dev/null; echo validate=$?
            before=$(wc -l < "$HOME/prompts")
            KEYGATE_ASKPASS= setsid -w keygate get -s signing -a release </dev/null >"$HOME/other.out" 2>&1; echo other=$?
            KEYGATE_ASKPASS= setsid -w keygate validate </dev/null >"$HOME/otherv.out" 2>&1; echo otherValidate=$?
            echo asked=$(( $(wc -l < "$HOME/prompts") - before ))
            keygate get -s signing -a release >/dev/null; echo here=$?
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["validate"], "0", r.summary)
        XCTAssertEqual(r.values["other"], "36", "another session has no window: \(r.summary)")
        XCTAssertEqual(r.values["otherValidate"], "36", "nothing to extend there, and no prompt: \(r.summary)")
        XCTAssertEqual(r.values["asked"], "0", r.summary)
        XCTAssertEqual(r.values["here"], "0", r.summary)
        let otherSaid = (try? String(contentsOfFile: h.user.home + "/otherv.out", encoding: .utf8)) ?? ""
        XCTAssertFalse(otherSaid.isEmpty, "says why")
        XCTAssertFalse(otherSaid.contains("sign-key"))
    }

    /// `keygate lock` ends the window validate opened, as sudo -k does.
    func test_lock_endsTheValidatedWindow() throws {
        let (h, env) = try harness(window: 300)
        let r = try h.run("""
            keygate validate 2>/dev/null; echo validate=$?
            keygate lock
            before=$(wc -l < "$HOME/prompts")
            keygate get -s signing -a release >/dev/null 2>&1; echo get=$?
            echo asked=$(( $(wc -l < "$HOME/prompts") - before ))
            """, extraEnvironment: env)
        XCTAssertEqual(r.values["validate"], "0", r.summary)
        XCTAssertEqual(r.values["get"], "0", r.summary)
        XCTAssertEqual(r.values["asked"], "1", "after lock the read asks: \(h.prompts())")
    }

    /// An administrator's 4-second window holds past a validate: validate extends the [default]
    /// window (300 s) it checks, and an item's own shorter window only while that one is still open,
    /// so the read 6 s after the password (at least: the sleep is a lower bound, and the window clock
    /// counts whole seconds) asks again (and, with an askpass that fails, exits 128).
    /// The admin file is a test policy root in a test-hook build; the release pass writes it into
    /// /etc/keygate/policies.d, for a service name no one else uses, and removes it afterwards.
    func test_validate_neverReopensAShorterWindowAnAdministratorSet() throws {
        let h = try CLIUserHarness()
        let service = "kgt-rtbank-\(UUID().uuidString.prefix(8).lowercased())"
        let policy = "[service \"\(service)\"]\nreuse-duration = 4\n"
        var env: [String: String] = [:]
        if BuiltGatekeeper.isBesideTheBuild {
            env["KEYGATE_TEST_POLICY_ROOT"] = try h.policyRoot(["10-rtbank.policy": policy], shipped: true, for: self)
        } else {
            let folder = "/etc/keygate/policies.d", file = "/etc/keygate/policies.d/90-\(service).policy"
            let made = !FileManager.default.fileExists(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try policy.write(toFile: file, atomically: false, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file)
            addTeardownBlock {
                try? FileManager.default.removeItem(atPath: file)
                if made { try? FileManager.default.removeItem(atPath: folder); try? FileManager.default.removeItem(atPath: "/etc/keygate") }
            }
        }
        let r = try h.run("""
            printf %s bank | keygate add -s \(service) -a a --access user-presence >/dev/null 2>&1; echo add=$?
            printf %s web | keygate add -s web -a a --access user-presence >/dev/null 2>&1; echo addWeb=$?
            keygate get -s \(service) -a a >/dev/null; echo first=$?
            keygate get -s web -a a >/dev/null; echo web=$?
            sleep 6
            KEYGATE_ASKPASS=/bin/false keygate get -s \(service) -a a >/dev/null 2>&1; echo closed=$?
            KEYGATE_ASKPASS=/bin/false keygate validate 2>/dev/null; echo validate=$?
            v=$(KEYGATE_ASKPASS=/bin/false keygate get -s \(service) -a a 2>/dev/null); echo after=$?; echo value=$v
            KEYGATE_ASKPASS=/bin/false keygate get -s web -a a >/dev/null 2>&1; echo webAfter=$?
            """, extraEnvironment: env, timeout: 120)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["first"], "0", r.summary)
        XCTAssertEqual(v["web"], "0", r.summary)
        XCTAssertEqual(v["closed"], "128", "the 4-second window closed: the read asks, and the askpass fails: \(r.summary)")
        XCTAssertEqual(v["validate"], "0", "the [default] window is open: validate extends it with no prompt: \(r.summary)")
        XCTAssertEqual(v["after"], "128", "validate did not reopen the item's own closed window: \(r.summary)")
        XCTAssertEqual(v["value"], "", r.summary)
        XCTAssertEqual(v["webAfter"], "0", "an item of the [default] window reads without a prompt: \(r.summary)")
    }

    func test_dashV_takesNoVerb() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("keygate -v get -s x -a y; echo rc=$?")
        XCTAssertEqual(r.values["rc"], "2", r.summary)
        XCTAssertTrue(r.err.contains("-v is `keygate validate` and takes no verb (got 'get')"), r.summary)
    }
}
