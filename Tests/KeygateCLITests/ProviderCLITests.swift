// The writes KeePassXC answers with a prompt, which a client that does not complete it reports
// as a failure (exit 36, "the default keyring collection is locked", while KeePassXC says it is
// unlocked), run with the real `keygate` binary against
// real providers alone on a private bus (ProviderSession): add, add -U that changes the
// attributes, get, delete, delete --all and migrate --to secret-service. The same script runs
// on kwalletd5. PAM is pam_wrapper's pam_matrix in a temporary folder (a test-hook build reads
// KEYGATE_TEST_PAM_CONFDIR): these tests are about the store, not authentication.
import Foundation
import KeygateTestSupport
import XCTest

final class ProviderCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    private func run(_ session: ProviderSession, _ script: String) throws -> ProcessResult {
        try ProviderCLI.run(session, script)
    }

    /// add, add -U changing the class, get, delete, delete --all, then migrate from the
    /// embedded store into the provider: every step exits 0 and reads back what was written.
    private func writesAndMigrate(_ provider: ProviderSession.Provider) throws {
        let session = try ProviderSession(provider)
        defer { session.stop() }

        let r = try run(session, """
            export KEYGATE_STORE=secret-service
            printf s1 | keygate add -s issue21 -a alice; echo add=$?
            echo get=$(keygate get -s issue21 -a alice)
            printf s2 | keygate add -U -s issue21 -a alice --accessible when-unlocked; echo update=$?
            echo get2=$(keygate get -s issue21 -a alice)
            keygate delete -s issue21 -a alice; echo delete=$?
            keygate exists -s issue21 -a alice; echo exists=$?
            printf a | keygate add -s issue21 -a a1; printf b | keygate add -s issue21 -a a2
            keygate delete -s issue21 --all --yes; echo deleteAll=$?
            echo left=$(keygate list -s issue21 | grep -c issue21)
            printf m | KEYGATE_STORE=embedded keygate add -s issue21-mig -a m; echo addEmbedded=$?
            unset KEYGATE_STORE
            keygate migrate --to secret-service --yes; echo migrate=$?
            echo migrated=$(KEYGATE_STORE=secret-service keygate get -s issue21-mig -a m)
            """)

        r.assertValues([
            "add": "0", "get": "s1", "update": "0", "get2": "s2", "delete": "0", "exists": "44", "deleteAll": "0", "left": "0",
            "addEmbedded": "0", "migrate": "0", "migrated": "m"
        ])
        // Every line but add's statement of the access it gave ("… while the keychain is unlocked").
        let problems = r.err.split(separator: "\n").filter { !$0.hasPrefix("keygate: stored ") }.joined(separator: "\n")
        XCTAssertFalse(problems.contains("locked"), r.summary)
    }

    func test_keePassXC_addUpdateDeleteDeleteAllAndMigrate_allWork_throughItsPrompts() throws {
        try writesAndMigrate(.keePassXC)
    }

    /// `list` and `exists` never prompt (keygate(1)): on gnome-keyring's locked collection, with
    /// no prompter on the bus and then with gcr-prompter on a display (DISPLAY set, so a `get`
    /// would show its unlock window), both exit 36 at once with gnome-keyring's advice, and no
    /// gcr-prompter window appears.
    func test_gnomeKeyring_locked_listAndExistsExit36_withNoPrompterAndWithOne_showingNoWindow() throws {
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1"])
        defer { session.stop() }
        let added = try run(session, "printf s | KEYGATE_STORE=secret-service keygate add -s issue35 -a locked; echo add=$?")
        XCTAssertEqual(added.values["add"], "0", added.summary)
        try session.lockDefaultCollection()
        let script = """
            export KEYGATE_STORE=secret-service
            keygate list -s issue35; echo list=$?
            keygate exists -s issue35 -a locked; echo exists=$?
            """

        let none = try run(session, script)
        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        let started = Date()
        let one = try run(session, "export DISPLAY=\(session.display)\n" + script)
        let elapsed = Date().timeIntervalSince(started)
        let windows = try Subprocess.run(["xdotool", "search", "--onlyvisible", "--class", "gcr-prompter"],
                                         environment: session.environment(display: true), timeout: 10)

        for r in [none, one] {
            XCTAssertEqual(r.values["list"], "36", r.summary)
            XCTAssertEqual(r.values["exists"], "36", r.summary)
            XCTAssertEqual(r.err.components(separatedBy: "the default keyring collection is locked (gnome-keyring)").count - 1, 2,
                           r.summary)
        }
        XCTAssertLessThan(elapsed, 5, "both at once: " + one.summary)
        XCTAssertEqual(windows.out.trimmingCharacters(in: .whitespacesAndNewlines), "", "gcr-prompter showed a window")
    }

    func test_kWallet_addUpdateDeleteDeleteAllAndMigrate_allWork() throws {
        try writesAndMigrate(.kWallet)
    }

    /// A locked collection with the unlock prompt turned off: exit 36 at once, with the
    /// provider's own advice, and no window.
    func test_keePassXC_locked_withNoUnlockPrompt_exits36_withKeePassXCsAdvice() throws {
        let session = try ProviderSession(.keePassXC)
        defer { session.stop() }
        try session.lockDefaultCollection()

        let r = try run(session, """
            printf s | KEYGATE_STORE=secret-service keygate --no-unlock-prompt add -s issue21 -a locked; echo add=$?
            """)

        XCTAssertEqual(r.values["add"], "36", r.summary)
        XCTAssertTrue(r.err.contains("the default keyring collection is locked (KeePassXC): unlock the database in KeePassXC"),
                      r.summary)
    }

    /// A closed wallet: `keygate get` asks kwalletd to unlock it, says on stderr that a window
    /// is waiting (kwalletd's password dialog, on its display), and when the dialog is
    /// dismissed (Prompt.Dismiss, as its Cancel does) exits 128, the user's cancel.
    func test_kWallet_closedWallet_getAnnouncesTheWindow_andItsDismissalExits128() throws {
        let session = try ProviderSession(.kWallet)
        defer { session.stop() }
        let added = try run(session, "printf s | KEYGATE_STORE=secret-service keygate add -s issue21 -a w; echo add=$?")
        XCTAssertEqual(added.values["add"], "0", added.summary)
        try session.lockDefaultCollection()
        let finished = DispatchSemaphore(value: 0)
        let dismisser = Thread {
            // After Keygate's own 5 s deadline has passed (so the window notice was given), dismiss
            // every prompt kwalletd lists, until the command has finished.
            usleep(7_000_000)
            repeat {
                let listed = try? Subprocess.run(["gdbus", "introspect", "--address", session.address, "--dest",
                                                  "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets/prompt"],
                                                 timeout: 10)
                let nodes = (listed?.out ?? "").split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                    .filter { $0.hasPrefix("node ") }
                    .map { $0.dropFirst("node ".count).trimmingCharacters(in: CharacterSet(charactersIn: " {")) }
                for node in nodes {
                    _ = try? session.gdbus("/org/freedesktop/secrets/prompt/" + node, "org.freedesktop.Secret.Prompt.Dismiss", [])
                }
            } while finished.wait(timeout: .now() + 0.5) == .timedOut
        }
        dismisser.start()

        let r = try run(session, "KEYGATE_STORE=secret-service keygate get -s issue21 -a w; echo get=$?")
        finished.signal()

        XCTAssertEqual(r.values["get"], "128", r.summary)
        XCTAssertTrue(r.err.contains("keygate: a KWallet window is waiting for your answer (to unlock the default collection)"),
                      r.summary)
        XCTAssertTrue(r.err.contains("the KWallet prompt to unlock the default collection was dismissed"), r.summary)
    }
}
