// KeePassXC as Debian installs it (scripts/provider-session with PROVIDER_SESSION_DEFAULTS=1:
// the Secret Service integration on, nothing else set), with the real `keygate` binary. Its
// default "Confirm when passwords are retrieved by clients" (ConfirmAccessItem) locks every
// item for every new program while the database stays open: Keygate unlocks the item with
// Service.Unlock on its path and completes the prompt, which is KeePassXC's "Access Request"
// window, answered here by a person at the display (WindowAnswerer: xdotool on Xvfb). Without
// a window allowed the message names the setting. `list` and `exists` read attributes only and
// show no window at all.
import Foundation
import KeygateTestSupport
import XCTest

final class KeePassXCDefaultsCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    private static let accessRequest = WindowAnswerer.Answer(name: "Access Request", keys: ["Return"])
    /// KeePassXC's delete confirmation (ConfirmDeleteItem): its default button is Cancel, so the
    /// person moves to the other button first.
    private static let confirmDelete = WindowAnswerer.Answer(name: "recycle bin|Delete entr", keys: ["shift+Tab", "Return"])

    private func defaults() throws -> ProviderSession {
        try ProviderSession(.keePassXC, settings: ["PROVIDER_SESSION_DEFAULTS": "1"])
    }

    /// add (no window), exists and list (no window: attributes only), get with prompts off
    /// (exit 36 naming the setting), get through the Access Request window, add -U without -l
    /// or -j (the label and comment stay), get again.
    func test_debianDefaults_readsGoThroughTheAccessRequestWindow_andListAndExistsShowNone() throws {
        let session = try defaults()
        defer { session.stop() }

        let quiet = try ProviderCLI.run(session, """
            export KEYGATE_STORE=secret-service
            printf s1 | keygate add -s issue35 -a alice -l 'Alice at work' -j 'rotated monthly'; echo add=$?
            keygate exists -s issue35 -a alice; echo exists=$?
            keygate exists -s issue35 -a nobody; echo missing=$?
            echo listed=$(keygate list -s issue35 | grep -c alice)
            keygate --no-unlock-prompt get -s issue35 -a alice; echo noPrompt=$?
            """)
        quiet.assertValues(["add": "0", "exists": "0", "missing": "44", "listed": "1", "noPrompt": "36"])
        XCTAssertTrue(quiet.err.contains("access to the item is not granted (KeePassXC locks each item for each program"),
                      quiet.summary)
        XCTAssertTrue(quiet.err.contains("\"Confirm when passwords are retrieved by clients\""), quiet.summary)
        XCTAssertFalse(quiet.err.contains("window is waiting"), quiet.summary)

        let person = try WindowAnswerer(display: session.display, [Self.accessRequest, Self.confirmDelete])
        let answered = try ProviderCLI.run(session, """
            export KEYGATE_STORE=secret-service
            echo get=$(keygate get -s issue35 -a alice)
            printf s2 | keygate add -U -s issue35 -a alice; echo update=$?
            echo get2=$(keygate get -s issue35 -a alice)
            keygate list -s issue35 --json; echo
            keygate delete -s issue35 -a alice; echo delete=$?
            keygate exists -s issue35 -a alice; echo gone=$?
            """, timeout: 240)
        person.stop()
        print("KeePassXC windows answered: \(person.answered)")

        let w = answered.values
        answered.assertValues(["get": "s1", "update": "0", "get2": "s2"])
        XCTAssertTrue(answered.out.contains("\"label\" : \"Alice at work\"") || answered.out.contains("\"label\":\"Alice at work\""),
                      answered.summary)
        XCTAssertTrue(answered.out.contains("rotated monthly"), answered.summary)
        XCTAssertEqual(w["delete"], "0", "\(person.answered)\n" + answered.summary)
        XCTAssertEqual(w["gone"], "44", answered.summary)
        XCTAssertGreaterThanOrEqual(person.answered.filter { $0.contains("Access Request") }.count, 2,
                                    "\(person.answered)\n" + answered.summary)
    }

    /// A locked database under the defaults ("Unlock before search" on): `list`, `exists` and a
    /// `get --no-unlock-prompt` exit 36 at once with KeePassXC's advice, and KeePassXC shows no
    /// window (the search that would open its unlock dialog is never sent). A plain `get` opens
    /// its unlock window, the password typed there opens the database, then its Access Request
    /// window, and the secret comes back.
    func test_debianDefaults_locked_listExistsAndNoPromptGetExit36AtOnce_withNoWindow_andGetUnlocksThroughTheWindow() throws {
        let session = try defaults()
        defer { session.stop() }
        let added = try ProviderCLI.run(session, "printf s1 | KEYGATE_STORE=secret-service keygate add -s issue35 -a bob; echo add=$?")
        XCTAssertEqual(added.values["add"], "0", added.summary)
        try session.lockDefaultCollection()

        let started = Date()
        let refused = try ProviderCLI.run(session, """
            export KEYGATE_STORE=secret-service
            keygate list -s issue35; echo list=$?
            keygate exists -s issue35 -a bob; echo exists=$?
            keygate --no-unlock-prompt get -s issue35 -a bob; echo get=$?
            """)
        let elapsed = Date().timeIntervalSince(started)
        var display = ProcessInfo.processInfo.environment
        display["DISPLAY"] = session.display
        let windows = try Subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "Unlock|Access"], environment: display,
                                         timeout: 10)

        refused.assertValues(["list": "36", "exists": "36", "get": "36"])
        XCTAssertEqual(refused.err.components(separatedBy: "the default keyring collection is locked (KeePassXC): unlock the "
                                              + "database in KeePassXC").count - 1, 3, refused.summary)
        XCTAssertLessThan(elapsed, 5, "each exits at once, without the 5 s search deadline: " + refused.summary)
        XCTAssertEqual(windows.out.trimmingCharacters(in: .whitespacesAndNewlines), "", "KeePassXC showed a window")

        let person = try WindowAnswerer(display: session.display, [
            WindowAnswerer.Answer(name: "Unlock", type: "kg-test", keys: ["Return"]), Self.accessRequest,
        ])
        let unlocked = try ProviderCLI.run(session, "echo get=$(KEYGATE_STORE=secret-service keygate get -s issue35 -a bob)",
                                           timeout: 240)
        person.stop()

        XCTAssertEqual(unlocked.values["get"], "s1", "\(person.answered)\n" + unlocked.summary)
        // Its unlock window, then its Access Request window: the person answered both.
        XCTAssertEqual(person.answered.count, 2, "\(person.answered)")
        XCTAssertTrue(person.answered.first?.contains("Unlock") ?? false, "\(person.answered)")
        XCTAssertTrue(person.answered.last?.contains("Access Request") ?? false, "\(person.answered)")
    }
}
