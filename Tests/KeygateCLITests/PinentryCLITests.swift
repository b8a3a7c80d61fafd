// The real binary asking through a pinentry (a stand-in script speaking Assuan),
// as a real user through real pam_unix: KEYGATE_PINENTRY and --pinentry choose it,
// the reason reaches it as SETDESC, and its PIN unlocks the keychain.
import Foundation
import KeygateTestSupport
import XCTest

final class PinentryCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private func installFakePinentry(_ h: CLIUserHarness) throws {
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              printf '%s\\n' "$line" >> "$HOME/pinentry-received"
              case "$line" in
                GETPIN) printf 'D %s\\nOK\\n' "$(cat "$HOME/answer")";;
                BYE) echo OK; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try h.writeUserFile("pinentry", script, mode: 0o700)
    }

    func test_pinentry_fromEnvironmentAndFlag_unlocks_andShowsTheReason() throws {
        let h = try CLIUserHarness()
        try installFakePinentry(h)
        let r = try h.run("""
            printf %s s1 | KEYGATE_PINENTRY="$HOME/pinentry" keygate add -s svc -a a; echo add=$?
            keygate lock
            KEYGATE_PINENTRY="$HOME/pinentry" keygate exec -s svc -a a --env S -- sh -c 'printf "got=%s\\n" "$S"'
            keygate lock
            PATH="$HOME:$PATH"; cp "$HOME/pinentry" "$HOME/pinentry-bin"; mkdir -p "$HOME/bin"; mv "$HOME/pinentry-bin" "$HOME/bin/pinentry"
            PATH="$HOME/bin:$PATH" keygate --pinentry get -s svc -a a >/dev/null; echo flag=$?
            echo getpins=$(grep -c '^GETPIN$' "$HOME/pinentry-received")
            """, askpass: false)
        r.assertValues(["add": "0", "got": "s1", "flag": "0", "getpins": "3"])
        let received = (try? String(contentsOfFile: h.user.home + "/pinentry-received", encoding: .utf8)) ?? ""
        XCTAssertTrue(received.contains("SETDESC run sh with svc/a\n"), "exec's reason is the description: \(received)")
        XCTAssertTrue(received.contains("SETPROMPT Password for \(h.user.name):"), received)
        XCTAssertEqual(try h.promptCount(), 0, "askpass was never used")
    }
}
