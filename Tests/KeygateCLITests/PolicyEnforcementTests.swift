// Policies enforced end to end: the built binary as a real user through real PAM,
// with policy folders the test writes (root-owned system layers, a user-owned user
// layer) under KEYGATE_TEST_POLICY_ROOT, honoured by test-hook builds only.
import Foundation
import KeygateTestSupport
import XCTest

final class PolicyEnforcementTests: XCTestCase {
    /// A policy root with the given files: "admin/10-x.policy" → text.
    private func policyRoot(_ files: [String: String], userOwner: TestUser? = nil) throws -> String {
        let root = try PolicyFolder.make(files, userOwner: userOwner?.name)
        addTeardownBlock { PolicyFolder.remove(root) }
        return root
    }

    func test_policyRequiresPresence_forOldItems_andSealsNewItemsWithIt() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let before = try h.run("printf %s old | keygate add -s svc -a old; echo add=$?")
        XCTAssertEqual(before.values["add"], "0", before.summary)
        let root = try policyRoot(["admin/10-presence.policy": "[default]\naccess = user-presence\nprompt = \"Unlock for the policy test\"\n"])
        let r = try h.run("""
            printf %s new | keygate add -s svc -a new; echo add=$?
            keygate list -s svc --json; echo
            keygate lock
            echo n0=$(wc -l < "$HOME/prompts")
            printf 'old=%s\\n' "$(keygate get -s svc -a old)"
            echo n1=$(wc -l < "$HOME/prompts")
            printf 'new=%s\\n' "$(keygate get -s svc -a new)"
            echo n2=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertTrue(r.out.contains("\"account\":\"new\",\"label\":\"svc/new\",\"comment\":null,\"accessible\":\"when-unlocked\",\"access\":\"user-presence\""),
                      "the new item was sealed with the policy's flags: \(r.summary)")
        XCTAssertTrue(r.out.contains("\"account\":\"old\",\"label\":\"svc/old\",\"comment\":null,\"accessible\":\"when-unlocked\",\"access\":null"), r.summary)
        XCTAssertEqual(v["old"], "old", r.summary)
        XCTAssertEqual(v["new"], "new", r.summary)
        XCTAssertEqual(Int(v["n1"] ?? ""), (Int(v["n0"] ?? "") ?? -9) + 1, "the old item now needs presence: one prompt")
        XCTAssertEqual(v["n2"], v["n1"], "inside the reuse window the new item does not prompt again")
        XCTAssertTrue(h.prompts().contains("Unlock for the policy test"), "the policy's prompt is the reason shown: \(h.prompts())")
    }

    func test_allowNonInteractive_neverPrompts_andReadsWhenUnlocked() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try policyRoot(["admin/20-ci.policy": "[service \"ci-*\"]\nallow-non-interactive = yes\n"])
        let r = try h.run("""
            keygate init >/dev/null
            printf %s tok | keygate add -s ci-deploy -a bot; echo add=$?
            keygate lock
            echo n0=$(wc -l < "$HOME/prompts")
            keygate get -s ci-deploy -a bot; echo locked=$?
            echo n1=$(wc -l < "$HOME/prompts")
            keygate unlock; printf 'v=%s\\n' "$(keygate get -s ci-deploy -a bot)"
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["locked"], "36", "never prompts: fails at once: \(r.summary)")
        XCTAssertEqual(v["n1"], v["n0"], "no prompt was shown")
        XCTAssertTrue(r.err.contains("allow-non-interactive"), r.summary)
        XCTAssertEqual(v["v"], "tok", r.summary)
    }

    func test_pamService_ofTheItemsPolicy_isTheOneAsked() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try policyRoot(["admin/40-svc.policy": "[service \"special\"]\naccess = user-presence\npam-service = keygate-special\n"])
        let r = try h.run("""
            keygate init >/dev/null
            printf %s x | keygate add -s special -a a; echo add=$?
            printf %s y | keygate add -s other -a a; echo addo=$?
            keygate lock
            keygate get -s other -a a >/dev/null; echo other=$?
            keygate lock
            keygate get -s special -a a; echo special=$?
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["other"], "0", "other items use the keychain's service: \(r.summary)")
        XCTAssertEqual(r.values["special"], "53", r.summary)
        XCTAssertTrue(r.err.contains("keygate-special"), "the item's policy chose the PAM service: \(r.summary)")
    }

    func test_corruptAdminFile_failsClosed_namingTheFile() throws {
        let h = try CLIUserHarness(sharedUser: true)
        _ = try h.run("printf %s x | keygate add -s svc -a a")
        let root = try policyRoot(["admin/30-broken.policy": "[default\naccess = user-presence\n"])
        let r = try h.run("""
            keygate get -s svc -a a; echo get=$?
            keygate get -s svc -a missing; echo missing=$?
            printf %s y | keygate add -s svc -a b; echo add=$?
            keygate list -s svc >/dev/null; echo list=$?
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(r.values["get"], "53", r.summary)
        XCTAssertEqual(r.values["missing"], "44", "an item that is not there reads as absent, the policy's decision made first or not: \(r.summary)")
        XCTAssertEqual(r.values["add"], "53", r.summary)
        XCTAssertEqual(r.values["list"], "0", "listing needs no policy decision: \(r.summary)")
        XCTAssertTrue(r.err.contains("30-broken.policy"), "the message names the file: \(r.summary)")
        // It says what is refused, writes of ungated items too, and what still works.
        XCTAssertTrue(r.err.contains("until it is fixed or removed, Keygate refuses to add, change or read items, ungated ones too, "
                                     + "since the file could have raised their access (listing and deleting still work; "
                                     + "run `keygate policy check` as root)"), r.summary)
        let ungated = try h.run("printf %s z | keygate add -s svc -a c --access none; echo add=$?; keygate delete -s svc -a a; echo delete=$?",
                                extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(ungated.values["add"], "53", "fail closed for what the broken file could have tightened: \(ungated.summary)")
        XCTAssertEqual(ungated.values["delete"], "0", ungated.summary)
    }

    func test_userFile_canTighten_theReuseWindow() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try policyRoot([
            "admin/10-presence.policy": "[default]\naccess = user-presence\n",
            "user/me.policy": "[default]\nreuse-duration = 0\nlock-after = 999999\n",
        ], userOwner: h.user)
        let r = try h.run("""
            printf %s g | keygate add -s svc -a a; echo add=$?
            keygate get -s svc -a a >/dev/null; keygate get -s svc -a a >/dev/null
            echo n=$(wc -l < "$HOME/prompts")
            keygate policy explain -s svc -a a
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["n"], "3", "init, then every read prompts (reuse 0 from the user's file): \(r.summary)")
        XCTAssertTrue(r.out.contains("me.policy:3") || r.err.contains("me.policy:3"),
                      "the loosening lock-after is ignored with a warning naming file:line: \(r.summary)")
    }
}
