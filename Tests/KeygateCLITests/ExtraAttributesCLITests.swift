// Arbitrary attributes end to end: secret-tool's own spellings (`keygate store
// --label=Foo myapp x`, `search --all`, `search --unlock`), `keygate add --attr NAME=VALUE`,
// matched by the store and shown by search, in both stores (make check runs this class again
// with KEYGATE_STORE=embedded); in the Secret Service the attributes are the item's own, so the
// real secret-tool finds Keygate's items by them. Real users, real gnome-keyring, real secret-tool.
import Foundation
import KeygateTestSupport
import XCTest

final class ExtraAttributesCLITests: XCTestCase {
    private var embedded: Bool { ProcessInfo.processInfo.environment["KEYGATE_STORE"] == "embedded" }

    func test_secretToolsStoreSpelling_storesUnderAnyAttributes_andSearchAndLookupMatchThem() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'foo-secret' | keygate store --label=Foo myapp x; echo store=$?
            printf %s 'bar-secret' | keygate store --label=Bar myapp y; echo store2=$?
            printf %s 'both-secret' | keygate store myapp x other z; echo store3=$?
            printf 'got=%s\\n' "$(keygate lookup myapp y)"
            keygate lookup myapp x >/dev/null 2>&1; echo twoMatch=$?
            printf 'gotBoth=%s\\n' "$(keygate lookup other z myapp x)"
            echo '--- search'
            keygate search --all --unlock myapp y; echo search=$?
            echo '--- json'
            keygate search --attr myapp=x --json
            echo '--- end'
            keygate lookup myapp nothing 2>/dev/null; echo none=$?
            keygate store --label=Bad keygate:class x </dev/null 2>"$HOME/err"; echo reserved=$?
            cat "$HOME/err"
            """)
        let v = r.values
        r.assertValues(["store": "0", "store2": "0", "store3": "0", "got": "bar-secret"])
        XCTAssertEqual(v["twoMatch"], "206", "myapp=x is on two items: lookup asks for one more attribute: \(r.summary)")
        XCTAssertEqual(v["gotBoth"], "both-secret", r.summary)
        XCTAssertEqual(v["search"], "0", r.summary)
        let search = r.out.components(separatedBy: "--- search\n").last?.components(separatedBy: "--- json").first ?? ""
        XCTAssertEqual(search.components(separatedBy: "class: ").count - 1, 1, search)
        XCTAssertTrue(search.contains("    service: myapp=y\n"), search)
        XCTAssertTrue(search.contains("    label: Bar\n"), search)
        XCTAssertTrue(search.contains("    attr: myapp=y\n"), search)
        let json = r.out.components(separatedBy: "--- json\n").last?.components(separatedBy: "--- end").first ?? ""
        XCTAssertTrue(json.contains("\"attributes\":{\"myapp\":\"x\"}"), json)
        XCTAssertTrue(json.contains("\"attributes\":{\"myapp\":\"x\",\"other\":\"z\"}"), json)
        XCTAssertFalse(search.contains("-secret") || json.contains("-secret"), "search never prints a secret: \(search)\(json)")
        XCTAssertTrue(json.contains("\"service\":\"myapp=x,other=z\",\"account\":\"\",\"label\":\"myapp=x,other=z\""),
                      "with no label, the label is the item's name: \(json)")
        XCTAssertEqual(v["none"], "44", r.summary)
        XCTAssertEqual(v["reserved"], "2", r.summary)
        XCTAssertTrue(r.out.contains("attribute 'keygate:class' is one Keygate keeps itself"), r.summary)
    }

    func test_addAttr_isStored_matched_shown_andKeptByAddU() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s p1 | keygate add -s deploy -a ci --access none --attr env=prod --attr team=ops 2>/dev/null; echo add=$?
            printf %s p2 | keygate add -s deploy -a qa --access none --attr env=staging 2>/dev/null; echo add2=$?
            echo '--- prod'
            keygate search env prod
            echo '--- staging'
            keygate search --attr env=staging --attr team=ops; echo staging=$?
            echo '--- list'
            keygate list -s deploy -a ci
            printf %s p3 | keygate add -U -s deploy -a ci 2>/dev/null; echo update=$?
            printf 'afterU=%s\\n' "$(keygate search env prod | grep -c 'account: ci')"
            printf 'value=%s\\n' "$(keygate lookup env prod)"
            keygate add -s x -a y --attr service=z </dev/null 2>/dev/null; echo own=$?
            keygate add -s x -a y --attr noequals </dev/null 2>/dev/null; echo noeq=$?
            """)
        let v = r.values
        XCTAssertEqual(v["add"], "0", r.summary)
        XCTAssertEqual(v["add2"], "0", r.summary)
        func section(_ name: String) -> String {
            let parts = r.out.components(separatedBy: "--- \(name)\n")
            return parts.count > 1 ? (parts[1].components(separatedBy: "--- ").first ?? "") : ""
        }
        let prod = section("prod")
        XCTAssertEqual(prod.components(separatedBy: "class: ").count - 1, 1, prod)
        XCTAssertTrue(prod.contains("    account: ci\n"), prod)
        XCTAssertTrue(prod.contains("    attr: env=prod\n    attr: team=ops\n"), prod)
        XCTAssertFalse(section("staging").contains("class: "), "every attribute must match: \(section("staging"))")
        XCTAssertTrue(section("list").contains("    attr: env=prod\n"), "list shows them too: \(section("list"))")
        XCTAssertEqual(v["update"], "0", r.summary)
        XCTAssertEqual(v["afterU"], "1", "add -U without --attr keeps the item's attributes: \(r.summary)")
        XCTAssertEqual(v["value"], "p3", r.summary)
        XCTAssertEqual(v["own"], "2", "a name Keygate keeps itself is refused: \(r.summary)")
        XCTAssertEqual(v["noeq"], "2", r.summary)
    }

    /// In the Secret Service the attributes are the item's own: the real secret-tool finds Keygate's item by them.
    func test_secretTool_findsKeygatesItems_byTheirExtraAttributes() throws {
        try XCTSkipIf(embedded, "the embedded store is Keygate's own file: secret-tool does not see it")
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'x' | keygate add -s web -a alice --access none --attr myapp=seen 2>/dev/null; echo add=$?
            secret-tool search --all myapp seen 2>&1 | grep -aE '^attribute\\.(myapp|service|account) = '
            """)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertTrue(r.out.contains("attribute.myapp = seen\n"), r.summary)
        XCTAssertTrue(r.out.contains("attribute.service = web\n"), r.summary)
        XCTAssertTrue(r.out.contains("attribute.account = alice\n"), r.summary)
    }

    /// Items the real secret-tool stored (no Keygate schema, its secret as given) are read by lookup and
    /// find-generic-password, as secret-tool reads them; a Keygate item with the same attributes comes first.
    func test_itemsSecretToolStored_areReadByLookupAndFindGenericPassword() throws {
        try XCTSkipIf(embedded, "secret-tool's items are in the Secret Service, not in Keygate's embedded store")
        try Requirement.require(CLIUserHarness.hasTool("secret-tool"), "secret-tool (libsecret-tools)")
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s 'st-foo' | secret-tool store --label=Foo myapp x; echo st=$?
            printf %s 'st-web' | secret-tool store --label=Web service web account bob; echo st2=$?
            printf 'lookup=%s\\n' "$(keygate lookup myapp x)"
            printf 'lookupWeb=%s\\n' "$(keygate lookup service web account bob)"
            printf 'findW=%s\\n' "$(keygate find-generic-password -s web -a bob -w)"
            echo '--- block'
            keygate find-generic-password -s web -a bob
            echo '--- end'
            keygate lookup myapp none 2>/dev/null; echo none=$?
            keygate find-generic-password -s web -a nobody -w 2>/dev/null; echo findNone=$?
            printf %s 'kg-web' | keygate add -s web -a bob --access none 2>/dev/null
            printf 'keygateFirst=%s\\n' "$(keygate find-generic-password -s web -a bob -w)"
            """)
        let v = r.values
        XCTAssertEqual(v["st"], "0", r.summary)
        XCTAssertEqual(v["st2"], "0", r.summary)
        XCTAssertEqual(v["lookup"], "st-foo", "secret-tool store --label=Foo myapp x, read back: \(r.summary)")
        XCTAssertEqual(v["lookupWeb"], "st-web", r.summary)
        XCTAssertEqual(v["findW"], "st-web", r.summary)
        let block = r.out.components(separatedBy: "--- block\n").last?.components(separatedBy: "--- end").first ?? ""
        XCTAssertTrue(block.contains("\"svce\"<blob>=\"web\""), block)
        XCTAssertTrue(block.contains("\"acct\"<blob>=\"bob\""), block)
        XCTAssertEqual(v["none"], "44", r.summary)
        XCTAssertEqual(v["findNone"], "44", r.summary)
        XCTAssertEqual(v["keygateFirst"], "kg-web", "Keygate's own item comes first: \(r.summary)")
    }
}
