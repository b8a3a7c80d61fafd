// The secret-tool verbs, driven through the built binary as a real user:
// search by any attribute (--attr NAME=VALUE or secret-tool's pairs), and lookup,
// store and clear in secret-tool's argument order, with their exit statuses.
import Foundation
import KeygateTestSupport
import XCTest

final class SecretToolVerbsTests: XCTestCase {
    func test_storeThenLookup_inSecretToolOrder_readsTheSecretFromStdin() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'vpn pw' | keygate store --label=VPN service vpn account alice; echo store=$?
            printf 'got=%s\\n' "$(keygate lookup service vpn account alice)"; echo bytes=$(keygate lookup service vpn account alice | wc -c)
            printf %s 'new pw' | keygate store --label=VPN service vpn account alice; echo replace=$?
            printf 'got2=%s\\n' "$(keygate lookup service vpn account alice)"
            keygate list -s vpn | grep label
            printf %s ipw | keygate store server example.com account carol protocol https; echo storei=$?
            keygate store service vpn account alice hunter2 </dev/null 2>"$HOME/err"; echo argvsecret=$?
            printf 'argverr=%s\\n' "$(grep -c hunter2 "$HOME/err")"
            printf 'goti=%s\\n' "$(keygate find-internet-password -s example.com -a carol -w)"
            """)
        let v = r.values
        XCTAssertEqual(v["store"], "0", r.summary)
        XCTAssertEqual(v["got"], "vpn pw", r.summary)
        XCTAssertEqual(v["bytes"], "6", "exact bytes, no newline off a terminal")
        XCTAssertEqual(v["replace"], "0", "store replaces, as secret-tool does: \(r.summary)")
        XCTAssertEqual(v["got2"], "new pw", r.summary)
        XCTAssertTrue(r.out.contains("    label: VPN\n"), r.summary)
        XCTAssertEqual(v["storei"], "0", r.summary)
        XCTAssertEqual(v["goti"], "ipw", "server makes an internet password: \(r.summary)")
        XCTAssertEqual(v["argvsecret"], "2", "a word after the pairs is refused: \(r.summary)")
        XCTAssertEqual(v["argverr"], "0", "and not repeated, since it may be a secret: \(r.summary)")
    }

    func test_lookup_exitStatuses_notFound44_ambiguous206_usage2() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s a | keygate add -s vpn -a alice; printf %s b | keygate add -s vpn -a bob
            keygate lookup service nosuch 2>/dev/null; echo none=$?
            keygate lookup service vpn 2>/dev/null; echo several=$?
            keygate lookup service 2>/dev/null; echo odd=$?
            keygate lookup colour blue 2>"$HOME/err"; echo unknown=$?
            cat "$HOME/err"
            keygate lookup 2>/dev/null; echo empty=$?
            printf 'one=%s\\n' "$(keygate lookup account bob service vpn)"
            """)
        let v = r.values
        r.assertValues(["none": "44", "several": "206", "odd": "2"])
        XCTAssertEqual(v["unknown"], "44", "any attribute name is taken, as secret-tool takes it; nothing has it: \(r.summary)")
        XCTAssertTrue(r.out.contains("no item matches"), r.summary)
        XCTAssertEqual(v["empty"], "2", r.summary)
        XCTAssertEqual(v["one"], "b", "pairs may come in any order: \(r.summary)")
    }

    func test_search_byAnyAttribute_neverPrintsASecret() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s s3cret | keygate add -s vpn -a alice -l 'Work VPN' -j 'office'
            printf %s s3cret | keygate add -s vpn -a bob
            printf %s s3cret | keygate add-internet-password -s example.com -a alice -r https
            echo '--- account'
            keygate search --attr account=alice
            echo '--- label'
            keygate search --attr 'label=Work VPN'
            echo '--- comment'
            keygate search --attr comment=office --json
            echo '--- server'
            keygate search server example.com protocol https
            echo '--- none'
            keygate search --attr account=nobody; echo none=$?
            keygate search --attr account 2>/dev/null; echo noeq=$?
            """)
        XCTAssertFalse(r.out.contains("s3cret"), r.summary)
        func section(_ name: String) -> String {
            let parts = r.out.components(separatedBy: "--- \(name)\n")
            return parts.count > 1 ? (parts[1].components(separatedBy: "--- ").first ?? "") : ""
        }
        let account = section("account")
        XCTAssertEqual(account.components(separatedBy: "class: ").count - 1, 2, "generic and internet items of alice: \(account)")
        XCTAssertFalse(account.contains("account: bob"), account)
        let label = section("label")
        XCTAssertEqual(label.components(separatedBy: "class: ").count - 1, 1, label)
        XCTAssertTrue(label.contains("    label: \"Work VPN\"\n"), label)
        XCTAssertTrue(section("comment").contains("\"comment\":\"office\""), r.summary)
        let server = section("server")
        XCTAssertTrue(server.contains("class: internet\n    server: example.com\n    protocol: htps\n"), server)
        XCTAssertEqual(r.values["none"], "0", "an empty search is not an error: \(r.summary)")
        XCTAssertEqual(r.values["noeq"], "2", r.summary)
    }

    func test_clear_deletesEveryMatchingItem_andNeedsAnAttribute() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s a | keygate add -s vpn -a alice; printf %s b | keygate add -s vpn -a bob
            printf %s c | keygate add -s mail -a alice
            keygate clear 2>/dev/null; echo empty=$?
            keygate clear service vpn; echo clear=$?
            keygate exists -s vpn -a alice; echo e1=$?
            keygate exists -s vpn -a bob; echo e2=$?
            keygate exists -s mail -a alice; echo e3=$?
            keygate clear service vpn 2>/dev/null; echo again=$?
            """)
        let v = r.values
        XCTAssertEqual(v["empty"], "2", "clear with no attribute never deletes everything: \(r.summary)")
        XCTAssertEqual(v["clear"], "0", r.summary)
        XCTAssertEqual([v["e1"], v["e2"], v["e3"]], ["44", "44", "0"], r.summary)
        XCTAssertEqual(v["again"], "44", r.summary)
    }
}
