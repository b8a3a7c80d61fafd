// A Secret Service provider that runs but has no default collection, as at a user's first
// login, with the real `keygate` binary: kwalletd5 whose wallet pam_kwallet5 just made and
// opened (scripts/provider-session, PROVIDER_SESSION_FIRST_LOGIN=1: kwalletd5 lists it as a
// collection only from its next start), and gnome-keyring with no keyring at all. Keygate never
// falls back to the embedded store while a provider runs: `init` says which store it chose and
// why, `add` fails saying exactly what to do, and `doctor` shows the choice.
import Foundation
import KeygateTestSupport
import XCTest

final class FirstLoginCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private func firstLogin(_ provider: ProviderSession.Provider, advice: String) throws {
        let session = try ProviderSession(provider, settings: ["PROVIDER_SESSION_FIRST_LOGIN": "1"])
        defer { session.stop() }

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

    func test_kWalletAtFirstLogin_saysToLogInAgain_andNeverFallsBackToTheEmbeddedStore() throws {
        try firstLogin(.kWallet, advice: "the wallet kdewallet exists and is open, but kwalletd5 shows a wallet to Secret Service "
                       + "programs only from its next start (pam_kwallet5 made it at this login): log out and back in once")
    }

    func test_gnomeKeyringWithNoDefaultCollection_saysWhatToDo_andNeverFallsBackToTheEmbeddedStore() throws {
        try firstLogin(.gnomeKeyring, advice: "create one (log in to the desktop once, or use seahorse)")
    }
}
