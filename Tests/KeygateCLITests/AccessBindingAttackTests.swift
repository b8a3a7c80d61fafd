// An item's access is bound to its sealed blob (DESIGN.md, "Whose access control"): a
// process of the same user, which can write the store, cannot lower an existing item's
// access. Each attack runs as the victim's uid, in another session with no terminal and no
// askpass, against the built keygate and its real gatekeeper, with the embedded store
// (an SQLite file the user owns): it rewrites the stored attributes, puts an ungated item's
// blob in place of a gated one, deletes and re-adds the item with none. None reads the
// gated secret; the attacker only ever reads what it wrote itself.
import Foundation
import KeygateTestSupport
import XCTest

final class AccessBindingAttackTests: XCTestCase {
    private let secret = "g4ted-s3cret"

    /// Shell lines that run SQL on the user's embedded store (python3's sqlite3, as any process of the user could).
    private func sql(_ statements: String) -> String {
        """

        python3 - "$HOME/.local/share/keygate/items.sqlite" <<'PY'
        import sqlite3, sys
        db = sqlite3.connect(sys.argv[1])
        def item(service):
            return db.execute("select item from attributes where name = 'service' and value = ?", (service,)).fetchone()[0]
        \(statements)
        db.commit()
        PY
        echo sql=$?

        """
    }

    /// A user with a gated item `vault` (user-presence) and an ungated one `plain`, read once by the owner.
    private func victim() throws -> CLIUserHarness {
        let h = try CLIUserHarness()
        let r = try h.run("""
            printf %s '\(secret)' | keygate add -s vault -a a --access user-presence; echo gated=$?
            printf %s open | keygate add -s plain -a a --access none; echo plain=$?
            printf 'get=%s\\n' "$(keygate get -s vault -a a)"
            """, extraEnvironment: ["KEYGATE_STORE": "embedded"])
        XCTAssertEqual(r.values["gated"], "0", r.summary)
        XCTAssertEqual(r.values["get"], secret, r.summary)
        return h
    }

    private func attack(_ h: CLIUserHarness, _ script: String) throws -> ProcessResult {
        let r = try h.run(script, askpass: false, extraEnvironment: ["KEYGATE_STORE": "embedded"])
        XCTAssertFalse(r.out.contains(secret) || r.err.contains(secret), "the gated secret never comes out: \(r.summary)")
        return r
    }

    func test_rewritingTheStoredAccessAttribute_doesNotLowerTheItem() throws {
        let h = try victim()
        let r = try attack(h, sql("db.execute(\"delete from attributes where item = ? and name = 'keygate:access'\", (item('vault'),))") + """

            keygate list -s vault | grep 'access:'
            keygate get -s vault -a a < /dev/null; echo get=$?
            """)
        XCTAssertEqual(r.values["sql"], "0", r.summary)
        XCTAssertTrue(r.out.contains("access: none"), "the attribute was rewritten: \(r.summary)")
        XCTAssertEqual(r.values["get"], "93", "the blob's sealed access decides, and the mismatch is refused: \(r.summary)")
        XCTAssertTrue(r.err.contains("was tampered with: its access attribute (none) does not match its sealed blob (user-presence)"),
                      r.summary)
    }

    func test_anUngatedItemsBlobInPlaceOfAGatedOne_opensNothing() throws {
        let h = try victim()
        // The blob alone, then the blob with the attribute made to match it.
        let r = try attack(h, sql("""
            db.execute("update items set blob = (select blob from items where id = ?) where id = ?", (item('plain'), item('vault')))
            """) + """

            keygate get -s vault -a a < /dev/null; echo blob=$?
            """ + sql("db.execute(\"delete from attributes where item = ? and name = 'keygate:access'\", (item('vault'),))") + """

            keygate get -s vault -a a < /dev/null; echo both=$?
            """)
        XCTAssertEqual(r.values["blob"], "93", "refused as tampered: \(r.summary)")
        XCTAssertEqual(r.values["both"], "93", "a blob sealed for another item does not open: \(r.summary)")
        XCTAssertFalse(r.out.contains("open"), "not even the other item's secret: \(r.summary)")
    }

    func test_deleteAndReAddWithNone_readsOnlyTheAttackersOwnSecret_andTheOldBlobStaysGated() throws {
        let h = try victim()
        // Keep the gated blob, delete the item, add one with none under the same name, then put the gated blob back into it.
        let r = try attack(h, sql("""
            open(sys.argv[1] + ".kept", "wb").write(db.execute("select blob from items where id = ?", (item('vault'),)).fetchone()[0])
            """) + """

            keygate delete -s vault -a a; echo delete=$?
            printf %s mine | keygate add -s vault -a a --access none; echo add=$?
            printf 'mine=%s\\n' "$(keygate get -s vault -a a < /dev/null)"
            """ + sql("""
            db.execute("update items set blob = ? where id = ?", (open(sys.argv[1] + ".kept", "rb").read(), item('vault')))
            """) + """

            keygate get -s vault -a a < /dev/null; echo replanted=$?
            """ + sql("""
            db.execute("insert or replace into attributes (item, name, value) values (?, 'keygate:access', 'user-presence')", (item('vault'),))
            """) + """

            keygate get -s vault -a a < /dev/null; echo matched=$?
            """)
        XCTAssertEqual(r.values["delete"], "0", r.summary)
        XCTAssertEqual(r.values["add"], "0", r.summary)
        XCTAssertEqual(r.values["mine"], "mine", "the attacker reads what it wrote, nothing more: \(r.summary)")
        XCTAssertEqual(r.values["replanted"], "93", "the old blob under a none attribute is refused: \(r.summary)")
        XCTAssertEqual(r.values["matched"], "36", "with its attribute back, the old blob needs the password again: \(r.summary)")
    }

    func test_anAttributeClaimingMore_doesNotSkipTheAdminsFloor() throws {
        let h = try CLIUserHarness()
        let put = try h.run("printf %s low | keygate add -s floored -a a --access none; echo add=$?",
                            extraEnvironment: ["KEYGATE_STORE": "embedded"])
        XCTAssertEqual(put.values["add"], "0", put.summary)
        let root = try h.policyRoot(["20-floor.policy": "[service \"floored\"]\nminimum-access = user-presence\n"], for: self)
        // The floor's check compares with the item's access: claiming user-presence would skip it, if the attribute decided.
        let r = try h.run(sql("""
            db.execute("insert or replace into attributes (item, name, value) values (?, 'keygate:access', 'user-presence')", (item('floored'),))
            """) + """

            keygate get -s floored -a a < /dev/null; echo get=$?
            """, askpass: false, extraEnvironment: ["KEYGATE_STORE": "embedded", "KEYGATE_TEST_POLICY_ROOT": root])
        XCTAssertEqual(r.values["get"], "93", r.summary)
        XCTAssertFalse(r.out.contains("low"), r.summary)
    }
}
