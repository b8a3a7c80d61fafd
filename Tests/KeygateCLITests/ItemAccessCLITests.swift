// Whose access control an item gets (DESIGN.md, "Whose access control"; the table in
// docs/ACCESS_CONTROL.md): its creator's, the CLI's default from the policy, an
// administrator's floor, a user's own tightening. Each row through the built keygate as a
// real user with real pam_unix, the shipped vendor policy (policies/00-default.policy) as
// the vendor layer, and a read with no terminal and no askpass (exit 36 when it needs a
// password, the secret when it does not).
import Foundation
import KeygateTestSupport
import XCTest

final class ItemAccessCLITests: XCTestCase {
    /// The line of policies/00-default.policy that sets default-access.
    private func shippedDefaultLine() throws -> Int {
        let text = try String(contentsOfFile: PackagePaths.root + "/policies/00-default.policy", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return try XCTUnwrap(lines.firstIndex { $0.hasPrefix("default-access") }) + 1
    }

    func test_creatorsChoice_accessNone_readsWithoutAPassword_whileUnlocked() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try h.policyRoot([:], shipped: true, for: self)
        let env = ["KEYGATE_TEST_POLICY_ROOT": root]
        let add = try h.run("keygate init >/dev/null; keygate unlock; printf %s plain | keygate add -s cron -a job --access none; echo add=$?",
                            extraEnvironment: env)
        XCTAssertEqual(add.values["add"], "0", add.summary)
        XCTAssertTrue(add.err.contains("""
            keygate: stored cron/job with access none: as given; it is read without a password while the keychain is unlocked\n
            """), add.summary)
        // A cron job: no terminal, no askpass, another session.
        let before = try h.promptCount()
        let cron = try h.run("keygate get -s cron -a job < /dev/null; rc=$?; echo; echo get=$rc", askpass: false, extraEnvironment: env)
        XCTAssertEqual(cron.values["get"], "0", cron.summary)
        XCTAssertTrue(cron.out.hasPrefix("plain\n"), cron.summary)
        XCTAssertEqual(try h.promptCount(), before, "no prompt for an item created with none")
        let list = try h.run("keygate list -s cron", extraEnvironment: env)
        XCTAssertTrue(list.out.contains("    access: none\n"), list.summary)
        let combined = try h.run("printf %s x | keygate add -s cron -a j2 --access none --or; echo add=$?", extraEnvironment: env)
        XCTAssertEqual(combined.values["add"], "206", combined.summary)
        XCTAssertTrue(combined.err.contains("--access none has no constraints to combine"), combined.summary)
    }

    func test_cliDefault_isThePolicysDefaultAccess_andAddAndListSaySo() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try h.policyRoot([:], shipped: true, for: self)
        let env = ["KEYGATE_TEST_POLICY_ROOT": root]
        let add = try h.run("keygate init >/dev/null; keygate unlock; printf %s s3 | keygate add -s vpn -a me; echo add=$?",
                            extraEnvironment: env)
        XCTAssertEqual(add.values["add"], "0", add.summary)
        let line = try shippedDefaultLine()
        XCTAssertTrue(add.err.contains("""
            keygate: stored vpn/me with access user-presence: the policy's default-access (\(root)/vendor/00-default.policy:\(line) \
            [default]); --access none stores an item read without a password while the keychain is unlocked\n
            """), add.summary)
        let list = try h.run("keygate list -s vpn", extraEnvironment: env)
        XCTAssertTrue(list.out.contains("    access: user-presence\n"), list.summary)
        let script = try h.run("keygate get -s vpn -a me < /dev/null; echo get=$?", askpass: false, extraEnvironment: env)
        XCTAssertEqual(script.values["get"], "36", "gated, as sudo is: \(script.summary)")
        XCTAssertFalse(script.out.contains("s3"), script.summary)
        let before = try h.promptCount()
        let person = try h.run("printf 'get=%s\\n' \"$(keygate get -s vpn -a me)\"", extraEnvironment: env)
        XCTAssertEqual(person.values["get"], "s3", person.summary)
        XCTAssertEqual(try h.promptCount(), before + 1, person.summary)
        // The same item, with the empty policy (no default-access): what it was sealed with still holds.
        let noPolicy = try h.run("keygate get -s vpn -a me < /dev/null; echo get=$?", askpass: false)
        XCTAssertEqual(noPolicy.values["get"], "36", "the access is the item's, not the policy's: \(noPolicy.summary)")
    }

    func test_adminFloor_raisesItemsAtReadTime_sealsNewOnes_andExplainNamesIt() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let plain = try h.run("keygate init >/dev/null; keygate unlock; printf %s old | keygate add -s vault-a -a me --access none; echo add=$?")
        XCTAssertEqual(plain.values["add"], "0", plain.summary)
        let floor = "[service \"vault*\"]\nminimum-access = user-presence\n"
        let root = try h.policyRoot(["20-floor.policy": floor], shipped: true, for: self)
        let env = ["KEYGATE_TEST_POLICY_ROOT": root]
        let origin = "\(root)/admin/20-floor.policy:2 [service \"vault*\"]"
        let r = try h.run("""
            keygate get -s vault-a -a me < /dev/null; echo old=$?
            keygate list -s vault-a
            keygate policy explain -s vault-a -a me
            printf %s new | keygate add -s vault-b -a me --access none; echo add=$?
            """, askpass: false, extraEnvironment: env)
        XCTAssertEqual(r.values["old"], "36", "an item made before the floor is raised at read time: \(r.summary)")
        XCTAssertTrue(r.out.contains("    access: none\n    access-at-read: user-presence (minimum-access, \(origin))\n"), r.summary)
        XCTAssertTrue(r.out.contains("  minimum-access         user-presence                   \(origin) (admin)\n"), r.summary)
        XCTAssertTrue(r.out.contains("  default-access         user-presence                   \(root)/vendor/00-default.policy:"), r.summary)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertTrue(r.err.contains("keygate: stored vault-b/me with access user-presence: raised from none by minimum-access (\(origin))\n"),
                      r.summary)
        // The new item was sealed with the floor: without the policy it is still gated; the old one is not.
        let after = try h.run("""
            keygate get -s vault-b -a me < /dev/null; echo new=$?
            keygate get -s vault-a -a me < /dev/null; rc=$?; echo; echo old=$rc
            """, askpass: false)
        XCTAssertEqual(after.values["new"], "36", after.summary)
        XCTAssertEqual(after.values["old"], "0", "the floor of a removed policy no longer applies to an item sealed before it: \(after.summary)")
    }

    func test_userFile_tightensItsOwnDefaultAndFloor_neverLowersTheSystems() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let root = try h.policyRoot(["20-floor.policy": "[service \"bank\"]\nminimum-access = user-presence\n"], shipped: true, user: [
            "me.policy": """
                [service "bank"]
                minimum-access = none
                [service "notes"]
                minimum-access = user-presence
                [service "tmp"]
                default-access = none
                """,
        ], for: self)
        let setup = try h.run("""
            keygate init >/dev/null; keygate unlock
            printf %s b | keygate add -s bank -a me --access none; echo bank=$?
            printf %s n | keygate add -s notes -a me --access none; echo notes=$?
            printf %s t | keygate add -s tmp -a me; echo tmp=$?
            """, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(setup.values["bank"], "0", setup.summary)
        XCTAssertTrue(setup.err.contains("keygate: stored bank/me with access user-presence: raised from none by minimum-access"),
                      "the user's none does not lower the admin's floor: \(setup.summary)")
        XCTAssertTrue(setup.err.contains("keygate: stored notes/me with access user-presence: raised from none by minimum-access "
                                         + "(\(root)/user/me.policy:4 [service \"notes\"])"), "the user's own floor: \(setup.summary)")
        XCTAssertTrue(setup.err.contains("keygate: stored tmp/me with access user-presence: the policy's default-access"),
                      "a user's default-access = none does not lower the vendor's: \(setup.summary)")
        let explain = try h.run("keygate policy explain -s tmp -a me", extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertTrue(explain.err.contains("warning: \(root)/user/me.policy:6: ignored default-access = none in [service \"tmp\"]"),
                      explain.summary)
        // The same-user attacker removes the user's own file: items sealed under it stay gated.
        let attack = try h.run("""
            rm -f '\(root)/user/me.policy'; echo rm=$?
            for s in bank notes tmp; do keygate get -s $s -a me < /dev/null; echo $s=$?; done
            """, askpass: false, extraEnvironment: ["KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(attack.values["rm"], "0", attack.summary)
        for service in ["bank", "notes", "tmp"] {
            XCTAssertEqual(attack.values[service], "36", "\(service) is sealed gated: \(attack.summary)")
        }
    }
}
