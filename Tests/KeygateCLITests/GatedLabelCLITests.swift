// A gated item's label, sealed in the store, with real processes: the built keygate as a real
// (pooled) user, the embedded store's file read byte for byte (the database and its -wal), a
// person typing the password at a real pseudo-terminal (TerminalShell), a row in the format an
// earlier Keygate wrote (plaintext label, made with sqlite3), and gnome-keyring on the private
// session bus as the provider, both ways through `keygate migrate`.
//
// Not in the embedded-store pass: each test names the store it runs on.
import Foundation
import KeygateTestSupport
import XCTest

final class GatedLabelCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself

    private let embedded = ["KEYGATE_STORE": "embedded"]

    private static func unique(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8))" }

    /// The lines that count, in the file and its log: what an attacker who copies them sees.
    private static let copyAndGrep = """
        db="$HOME/.local/share/keygate/items.sqlite"
        cp "$db" "$HOME/copy.sqlite"; [ -e "$db-wal" ] && cp "$db-wal" "$HOME/copy.sqlite-wal"
        inFile() { cat "$HOME/copy.sqlite" "$HOME/copy.sqlite-wal" 2>/dev/null | grep -ac "$1"; }
        """

    /// Gated items made through the CLI (user presence; a this-device-only one too) keep no
    /// plaintext of their label in the database file or its log, while an ungated item's label is
    /// there (the grep looks at what is there). The label still lists, and matches a search by
    /// label, while the keychain is unlocked; once locked it lists as sealed, and a search by it
    /// answers exactly as a search by a label no item has.
    func test_aGatedItemsLabel_isNotInTheDatabaseFile_andListsWhileUnlocked_only() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let gated = Self.unique("GATED-LABEL"), device = Self.unique("DEVICE-LABEL"), open = Self.unique("OPEN-LABEL")
        let r = try h.run("""
            keygate init </dev/null >/dev/null 2>"$HOME/init.err" || { echo init-failed; cat "$HOME/init.err"; }
            printf %s 'S-1' | keygate add -s kg-lab -a bob -l '\(gated)' --access user-presence >/dev/null; echo add=$?
            printf %s 'S-2' | keygate add -s kg-dev -a bob -l '\(device)' --access user-presence \
                --accessible when-unlocked-this-device-only >/dev/null; echo addDevice=$?
            printf %s 'S-3' | keygate add -s kg-open -a bob -l '\(open)' --access none >/dev/null; echo addOpen=$?
            \(Self.copyAndGrep)
            echo gatedInFile=$(inFile '\(gated)')
            echo deviceInFile=$(inFile '\(device)')
            echo openInFile=$(inFile '\(open)')
            echo column=$(sqlite3 "$HOME/copy.sqlite" "SELECT label FROM items WHERE label LIKE 'kg-lab/%'")
            echo listed=$(keygate list -s kg-lab | grep -cx '    label: \(gated)')
            echo listedDevice=$(keygate list -s kg-dev | grep -cx '    label: \(device)')
            keygate find-generic-password -l '\(gated)' >/dev/null 2>&1; echo found=$?
            keygate lock >/dev/null; echo lock=$?
            echo lockedListed=$(keygate list -s kg-lab | grep -c 'label: (sealed: the keychain is locked')
            echo lockedLeak=$(keygate list --json -s kg-lab | grep -c '\(gated)')
            keygate find-generic-password -l '\(gated)' >"$HOME/right.out" 2>&1; echo right=$?
            keygate find-generic-password -l 'NO-SUCH-LABEL' >"$HOME/wrong.out" 2>&1; echo wrong=$?
            cmp -s "$HOME/right.out" "$HOME/wrong.out" && echo sameAnswer=yes || echo sameAnswer=no
            echo openListedLocked=$(keygate list -s kg-open | grep -cx '    label: \(open)')
            echo prompts=$(wc -l < "$HOME/prompts")
            """, extraEnvironment: embedded)
        let v = r.values
        XCTAssertNil(v["init-failed"], r.summary)
        r.assertValues([
            "add": "0", "addDevice": "0", "addOpen": "0", "lock": "0",
            "gatedInFile": "0",                 // no plaintext of a gated item's label in the file,
            "deviceInFile": "0",                // nor of a this-device-only gated item's
            "column": "kg-lab/bob",             // the plaintext column holds the identity's name only
            "listed": "1", "listedDevice": "1", // the label lists while the keychain is unlocked,
            "found": "0",                       // and a search by it finds the item
            "lockedListed": "1",                // locked: the label is said to be sealed,
            "lockedLeak": "0",                  // with no label text anywhere in the listing,
            "sameAnswer": "yes",                // and a search by it answers as for a label no item has
            "openListedLocked": "1",            // an ungated item's label lists locked or not
            "prompts": "1",                     // only init asked for a password: listing and searching never do
        ])
        XCTAssertNotEqual(v["openInFile"], "0", "an ungated item's label is there as text (the grep sees the bytes): \(r.summary)")
        XCTAssertNotEqual(v["right"], "0", "locked: a search by the sealed label finds nothing: \(r.summary)")
        XCTAssertEqual(v["right"], v["wrong"], "the same exit as a label no item has: \(r.summary)")
    }

    /// A row an earlier Keygate wrote (the gated item's label in the plaintext column, no sealed
    /// label) still reads with its label; its next write (`keygate add -U`, which keeps the label)
    /// seals it, and the old text is gone from the file (secure_delete).
    func test_anOldRowWithAPlaintextLabel_stillReads_andItsNextWriteSealsIt() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let old = Self.unique("OLD-LABEL")
        let r = try h.run("""
            keygate init </dev/null >/dev/null 2>"$HOME/init.err" || { echo init-failed; cat "$HOME/init.err"; }
            printf %s 'OLD-S' | keygate add -s kg-old -a bob -l 'placeholder' --access user-presence >/dev/null; echo add=$?
            db="$HOME/.local/share/keygate/items.sqlite"
            sqlite3 "$db" "UPDATE items SET label = '\(old)' WHERE label = 'kg-old/bob'; \
                DELETE FROM attributes WHERE name = 'keygate:sealed-label';"; echo rewrite=$?
            echo sealedRows=$(sqlite3 "$db" "SELECT count(*) FROM attributes WHERE name = 'keygate:sealed-label'")
            \(Self.copyAndGrep)
            echo before=$(inFile '\(old)')
            echo oldListed=$(keygate list -s kg-old | grep -cx '    label: \(old)')
            keygate lock >/dev/null
            echo oldListedLocked=$(keygate list -s kg-old | grep -cx '    label: \(old)')
            keygate unlock </dev/null >/dev/null 2>&1; echo unlock=$?
            printf %s 'NEW-S' | keygate add -U -s kg-old -a bob --access user-presence >/dev/null; echo update=$?
            \(Self.copyAndGrep)
            echo after=$(inFile '\(old)')
            echo sealedAfter=$(sqlite3 "$HOME/copy.sqlite" "SELECT count(*) FROM attributes WHERE name = 'keygate:sealed-label'")
            echo newListed=$(keygate list -s kg-old | grep -cx '    label: \(old)')
            """, extraEnvironment: embedded)
        XCTAssertNil(r.values["init-failed"], r.summary)
        XCTAssertNotEqual(r.values["before"], "0", "its label is in the file as text: \(r.summary)")
        r.assertValues([
            "add": "0", "rewrite": "0", "unlock": "0", "update": "0",
            "sealedRows": "0",      // the row is in the earlier format
            "oldListed": "1",       // an old row still reads, with its label,
            "oldListedLocked": "1", // locked too (it is not sealed yet)
            "sealedAfter": "1",     // its next write sealed the label,
            "after": "0",           // and the old text is gone from the file and its log
            "newListed": "1",       // the label is kept, sealed
        ])
    }

    /// The provider store (gnome-keyring): a gated item's `Label` and every attribute any process
    /// of the user reads over D-Bus hold no plaintext of its label; `keygate list` shows it. Moved
    /// to the embedded store and back (`keygate migrate`, no password), it stays sealed and reads.
    func test_theProviderStore_andMigrateBothWays_keepTheLabelSealed() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let gated = Self.unique("PROVIDER-LABEL")
        let r = try h.run("""
            export KEYGATE_STORE=secret-service
            keygate init </dev/null >/dev/null 2>"$HOME/init.err" || { echo init-failed; cat "$HOME/init.err"; }
            printf %s 'P-1' | keygate add -s kg-prov -a bob -l '\(gated)' --access user-presence >/dev/null; echo add=$?
            secret-tool search --all service kg-prov > "$HOME/bus.out" 2>&1
            echo onTheBus=$(grep -c '\(gated)' "$HOME/bus.out")
            echo busLabel=$(sed -n 's/^label = //p' "$HOME/bus.out")
            echo sealedAttribute=$(grep -c '^attribute.keygate:sealed-label = ' "$HOME/bus.out")
            echo listed=$(keygate list -s kg-prov | grep -cx '    label: \(gated)')
            keygate migrate --to embedded --delete-source --yes >/dev/null 2>"$HOME/migrate.err"; echo toEmbedded=$?
            echo migrateError=$(head -c 400 "$HOME/migrate.err")
            \(Self.copyAndGrep)
            echo inFile=$(inFile '\(gated)')
            echo listedEmbedded=$(KEYGATE_STORE=embedded keygate list -s kg-prov | grep -cx '    label: \(gated)')
            keygate migrate --to secret-service --delete-source --yes >/dev/null 2>"$HOME/back.err"; echo back=$?
            echo backError=$(head -c 400 "$HOME/back.err")
            echo listedBack=$(keygate list -s kg-prov | grep -cx '    label: \(gated)')
            echo onTheBusBack=$(secret-tool search --all service kg-prov 2>&1 | grep -c '\(gated)')
            """)
        XCTAssertNil(r.values["init-failed"], r.summary)
        r.assertValues([
            "add": "0", "toEmbedded": "0", "back": "0",
            "onTheBus": "0",                                    // no process on the bus reads the label:
            "busLabel": "kg-prov/bob", "sealedAttribute": "1",  // the Label property is the identity's name
            "listed": "1",                                      // keygate shows the real label
            "inFile": "0", "listedEmbedded": "1",               // moved, it stays sealed, and reads,
            "listedBack": "1", "onTheBusBack": "0",             // and back again
        ])
    }

    // MARK: A person at a terminal

    /// Locked, the label lists as sealed; the person unlocks at a real terminal, typing the
    /// password, and the label lists again, the real one.
    func test_thePersonWhoAuthenticatesAtATerminal_getsTheLabelBack() throws {
        let shell = try TerminalShell()
        let label = Self.unique("TTY-LABEL")
        XCTAssertEqual(try shell.run("export KEYGATE_STORE=embedded").status, 0)
        try shell.start("keygate init")
        let made = try shell.finish(answering: [passwordPrompt(shell): shell.user.password])
        XCTAssertEqual(made.status, 0, made.screen)
        let added = try shell.run("printf %s 'b4nk' | keygate add -s bank -a alice -l '\(label)' --access user-presence >/dev/null")
        XCTAssertEqual(added.status, 0, added.screen)
        XCTAssertEqual(try shell.run("keygate lock").status, 0)
        let locked = try shell.run("keygate list -s bank")
        XCTAssertEqual(locked.status, 0, locked.screen)
        XCTAssertTrue(locked.screen.contains("label: (sealed: the keychain is locked; keygate unlock shows it)"), locked.screen)
        XCTAssertFalse(locked.screen.contains(label), locked.screen)

        try shell.start("keygate unlock")
        let unlocked = try shell.finish(answering: [passwordPrompt(shell): shell.user.password])
        XCTAssertEqual(unlocked.status, 0, unlocked.screen)
        let listed = try shell.run("keygate list -s bank")
        XCTAssertEqual(listed.status, 0, listed.screen)
        XCTAssertTrue(listed.screen.contains("    label: \(label)\n"), "the real label, after the person authenticated: \(listed.screen)")
        XCTAssertFalse(shell.terminal.screen.contains(shell.user.password), "the password was never echoed")
    }

    private func passwordPrompt(_ shell: TerminalShell) -> String { "Password for \(shell.user.name): " }
}
