// A Secret Service provider that runs but has no default collection, as at a user's first
// login, with the real `keygate` binary: kwalletd5 started by a real login through libpam and
// pam_kwallet5 on a fresh home (scripts/provider-session, PROVIDER_SESSION_PAM_LOGIN: the
// wallet is made and opened, and kwalletd5 lists it as a collection only from its next start),
// and gnome-keyring with no keyring at all. Keygate never falls back to the embedded store while
// a provider runs: `init` says which store it chose and why, `add` fails saying exactly what to
// do, and `doctor` shows the choice. At KWallet's next login the wallet is a collection, read
// as locked although open: Keygate completes kwalletd5's windowless unlock, even for `list`.
import Foundation
import KeygateTestSupport
import XCTest

final class FirstLoginCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private func firstLogin(_ session: ProviderSession, advice: String) throws {
        let r = try ProviderCLI.run(session, """
            keygate init >/dev/null 2>"$HOME/init.err"; echo init=$?
            printf 'said=%s\\n' "$(grep '^Items are kept in' "$HOME/init.err")"
            printf s | keygate add -s issue35 -a first 2>"$HOME/add.err"; echo add=$?
            printf 'addErr=%s\\n' "$(cat "$HOME/add.err")"
            keygate doctor >"$HOME/doctor.out" 2>&1; echo doctor=$?
            printf 'store=%s\\n' "$(grep ' store:' "$HOME/doctor.out")"
            printf 'service=%s\\n' "$(grep ' secret-service:' "$HOME/doctor.out")"
            printf 'serviceAdvice=%s\\n' "$(grep -A1 ' secret-service:' "$HOME/doctor.out" | tail -1)"
            ls "$HOME/.local/share/keygate/items.sqlite" 2>/dev/null; echo embedded=$?
            """)

        let v = r.values
        XCTAssertEqual(v["init"], "0", r.summary)
        XCTAssertTrue(v["said"]?.hasPrefix("Items are kept in the Secret Service: auto (the default): a Secret Service runs, but")
                      ?? false, r.summary)
        XCTAssertTrue(v["said"]?.contains(advice) ?? false, r.summary)
        XCTAssertEqual(v["add"], "53", r.summary)
        XCTAssertTrue(v["addErr"]?.contains("has no default collection: " + advice) ?? false, r.summary)
        XCTAssertEqual(v["doctor"], "53", r.summary)
        XCTAssertTrue(v["store"]?.hasPrefix("OK   store: Secret Service (auto (the default): this keychain's items are in the "
                                            + "secret-service store") ?? false, r.summary)
        XCTAssertTrue(v["service"]?.hasPrefix("FAIL secret-service: ") ?? false, r.summary)
        XCTAssertTrue(v["service"]?.contains("has no default collection: " + advice) ?? false, r.summary)
        XCTAssertTrue(v["serviceAdvice"]?.contains("Keygate keeps to the Secret Service while one runs") ?? false, r.summary)
        XCTAssertFalse(v["serviceAdvice"]?.contains("start gnome-keyring") ?? true, r.summary)
        XCTAssertEqual(v["embedded"], "2", "no embedded store was made: " + r.summary)
    }

    /// The first login through real pam_kwallet5: the wallet kdewallet is made and open, the
    /// Secret Service has no collection for it, and what Keygate says is exact: at the next login
    /// (kwalletd5 ended as a logout ends it, then pam_kwallet5 again) the same keychain keeps
    /// its items in kdewallet, and `list`, `exists` and a `get --no-unlock-prompt` answer with no
    /// window: kwalletd5 shows its open wallet as a locked collection, whose unlock prompt it
    /// completes with none.
    func test_kWalletAtFirstLogin_saysToLogInAgain_andAtTheNextLoginUsesItsWallet() throws {
        let user = try TestUserPool.borrow()
        defer { TestUserPool.giveBack(user) }
        let session = try ProviderSession.kWalletLogin(user)
        defer { session.stop() }
        let wallet = try session.kWalletCall("isOpen", ["kdewallet"])
        XCTAssertEqual(wallet.out.trimmingCharacters(in: .whitespacesAndNewlines), "(true,)", "pam_kwallet5 opened the wallet")
        let collections = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.DBus.Properties.Get",
                                            ["org.freedesktop.Secret.Service", "Collections"])
        XCTAssertTrue(collections.out.contains("@ao []"), "no Secret Service collection yet: \(collections.out)")
        // Nor can a client ask for it: kwalletd5 knows no collection of that path until its next start.
        let unlock = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.Unlock",
                                       ["['/org/freedesktop/secrets/collection/kdewallet']"])
        XCTAssertTrue(unlock.status != 0 && unlock.err.contains("does not exist"), unlock.out + unlock.err)

        try firstLogin(session, advice: "the wallet kdewallet exists and is open, but kwalletd5 shows a wallet to Secret Service "
                       + "programs only from its next start (pam_kwallet5 made it at this login): log out and back in once")

        try session.relogin()
        let locked = try session.gdbus("/org/freedesktop/secrets/collection/kdewallet", "org.freedesktop.DBus.Properties.Get",
                                       ["org.freedesktop.Secret.Collection", "Locked"])
        XCTAssertTrue(locked.out.contains("true"), "kwalletd5 shows the open wallet as locked: \(locked.out)")
        let r = try ProviderCLI.run(session, """
            keygate list; echo list=$?
            keygate exists -s issue35 -a first; echo missing=$?
            printf s1 | keygate add -s issue35 -a first; echo add=$?
            keygate exists -s issue35 -a first; echo exists=$?
            keygate list -s issue35 | grep -q first; echo listed=$?
            echo get=$(keygate --no-unlock-prompt get -s issue35 -a first)
            keygate doctor >"$HOME/doctor.out" 2>&1
            printf 'service=%s\\n' "$(grep ' secret-service:' "$HOME/doctor.out")"
            ls "$HOME/.local/share/keygate/items.sqlite" 2>/dev/null; echo embedded=$?
            """)
        var display = ProcessInfo.processInfo.environment
        display["DISPLAY"] = session.display
        let windows = try Subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "."], environment: display, timeout: 10)

        let v = r.values
        r.assertValues(["list": "0", "missing": "44", "add": "0", "exists": "0", "listed": "0", "get": "s1"])
        XCTAssertTrue(v["service"]?.hasPrefix("OK   secret-service: ") ?? false, r.summary)
        XCTAssertEqual(v["embedded"], "2", "no embedded store was made: " + r.summary)
        XCTAssertEqual(windows.out.trimmingCharacters(in: .whitespacesAndNewlines), "", "kwalletd5 showed a window")
        let items = try session.gdbus("/org/freedesktop/secrets/collection/kdewallet", "org.freedesktop.DBus.Properties.Get",
                                      ["org.freedesktop.Secret.Collection", "Items"])
        XCTAssertTrue(items.out.contains("/org/freedesktop/secrets/collection/kdewallet/"), "the item is in kdewallet: \(items.out)")
    }

    func test_gnomeKeyringWithNoDefaultCollection_saysWhatToDo_andNeverFallsBackToTheEmbeddedStore() throws {
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_FIRST_LOGIN": "1"])
        defer { session.stop() }
        try firstLogin(session, advice: "create one (log in to the desktop once, or use seahorse)")
    }

    /// A desktop's first login as gnome-keyring 42.1 meets it (ProviderSession's
    /// PROVIDER_SESSION_FIRST_LOGIN=desktop): started with `--unlock` and an empty password, no
    /// login keyring yet (ReadAlias("default") answers "/"), gcr-prompter D-Bus activatable (not
    /// running), DISPLAY naming a running X server. As `secret-tool store` does there, `keygate
    /// add` has gnome-keyring show gcr-prompter's new-keyring window, says so, and once a person
    /// types a password twice (xdotool) stores; the item reads back, and secret-tool sees the new
    /// keyring. With no display the advice stays.
    func test_gnomeKeyringAtADesktopsFirstLogin_aWriteCreatesTheDefaultKeyringThroughTheActivatablePrompter() throws {
        for (path, package) in [("/usr/libexec/gcr-prompter", "gcr"), ("/usr/bin/xdotool", "xdotool"),
                                ("/usr/bin/secret-tool", "libsecret-tools")] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: path), "\(path) (apt-get install \(package))")
        }
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_FIRST_LOGIN": "desktop"])
        defer { session.stop() }
        let alias = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["default"])
        XCTAssertTrue(alias.out.contains("'/'"), "no default collection yet: \(alias.out)")

        // No display: the advice, and nothing made.
        let headless = try ProviderCLI.run(session, """
            keygate init >/dev/null 2>"$HOME/init.err"; echo init=$?
            printf s | keygate add -s desk -a first 2>"$HOME/add.err"; echo add=$?
            printf 'addErr=%s\\n' "$(cat "$HOME/add.err")"
            """)
        XCTAssertEqual(headless.values["init"], "0", headless.summary)
        XCTAssertEqual(headless.values["add"], "53", headless.summary)
        XCTAssertTrue(headless.values["addErr"]?.contains("has no default collection: create one") ?? false, headless.summary)

        let person = try WindowAnswerer(display: session.display, [
            WindowAnswerer.Answer(name: "gcr-prompter", byClass: true, type: "kg-test",
                                  keys: ["Tab", "k", "g", "minus", "t", "e", "s", "t", "Return"]),
        ])
        defer { person.stop() }
        let desktop = try ProviderCLI.run(session, """
            export DISPLAY=\(session.display)
            printf s3cret | keygate add -s desk -a first 2>"$HOME/add.err"; echo add=$?
            printf 'addErr=%s\\n' "$(tr '\\n' ' ' < "$HOME/add.err")"
            printf 'get=%s\\n' "$(keygate get -s desk -a first)"
            printf t | secret-tool store --label=t app desk-test; echo store=$?
            printf 'lookup=%s\\n' "$(secret-tool lookup app desk-test)"
            """, timeout: 180)
        XCTAssertEqual(desktop.values["add"], "0", "\(desktop.summary)\nanswered: \(person.answered)")
        XCTAssertTrue(desktop.values["addErr"]?.contains("new keyring") ?? false, "it says so: \(desktop.summary)")
        XCTAssertEqual(desktop.values["get"], "s3cret", desktop.summary)
        XCTAssertEqual(desktop.values["lookup"], "t", "secret-tool uses the keyring Keygate had made: \(desktop.summary)")
        XCTAssertEqual(person.answered.count, 1, "one window, answered once: \(person.answered)")
        let made = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["default"])
        XCTAssertFalse(made.out.contains("'/'"), made.out)
    }
}
