// Hostile input to the real `keygate` binary, as a real user with a real gnome-keyring:
// oversize secrets, names and labels exit 206 (errSecParam) with a message and store
// nothing; names that are not valid UTF-8 exit 2 (two different invalid bytes would
// otherwise both become U+FFFD and name the same item). NUL bytes cannot travel in argv;
// the library's refusal of them is in KeygateTests/HostileInputTests.
import Foundation
import KeygateTestSupport
import XCTest

final class HostileInputCLITests: XCTestCase {
    func test_add_refusesOversizeSecret_name_andLabel_exit206_andStoresNothing() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s ok | keygate add -s hostile -a control; echo control=$?
            head -c 65537 /dev/zero | tr '\\0' a | keygate add -s hostile -a big 2>"$HOME/e1"; echo bigSecret=$?
            head -c 65536 /dev/zero | tr '\\0' a | keygate add -s hostile -a limit; echo limitSecret=$?
            long=$(head -c 2000 /dev/zero | tr '\\0' s)
            printf %s x | keygate add -s "$long" -a a 2>"$HOME/e2"; echo bigService=$?
            label=$(head -c 100000 /dev/zero | tr '\\0' l)
            printf %s x | keygate add -s hostile -a labelled -l "$label" 2>"$HOME/e3"; echo bigLabel=$?
            keygate exists -s hostile -a big; echo existsBig=$?
            keygate exists -s hostile -a labelled; echo existsLabelled=$?
            keygate exists -s hostile -a control; echo existsControl=$?
            printf 'e1=%s\\n' "$(cat "$HOME/e1")"; printf 'e2=%s\\n' "$(cat "$HOME/e2")"; printf 'e3=%s\\n' "$(cat "$HOME/e3")"
            """)
        let v = r.values
        XCTAssertEqual(v["control"], "0", r.summary)
        XCTAssertEqual(v["limitSecret"], "0", "a secret of exactly 64 KiB is stored: \(r.summary)")
        r.assertValues(["bigSecret": "206", "bigService": "206", "bigLabel": "206"])
        XCTAssertEqual(v["existsBig"], "44", "nothing was stored for the oversize secret")
        XCTAssertEqual(v["existsLabelled"], "44", "nothing was stored for the oversize label")
        XCTAssertEqual(v["existsControl"], "0", "control: the ordinary item is there: \(r.summary)")
        XCTAssertTrue(v["e1"]?.contains("65536") == true, "the message names the limit: \(r.summary)")
        XCTAssertTrue(v["e2"]?.contains("1024") == true, r.summary)
        XCTAssertTrue(v["e3"]?.contains("label") == true, r.summary)
        print("HostileInputCLITests: 3 oversize inputs refused")
    }

    func test_names_thatAreNotUTF8_areRefusedWithUsageError_andNeverAliasAnItem() throws {
        let h = try CLIUserHarness(sharedUser: true)
        let r = try h.run("""
            printf %s first | keygate add -s "v$(printf '\\377')" -a a 2>"$HOME/e1"; echo addFF=$?
            printf %s second | keygate add -s "v$(printf '\\376')" -a a; echo addFE=$?
            keygate get -s vpn -a "$(printf '\\300\\200')"; echo getOverlong=$?
            keygate delete -s x -a "$(printf '\\355\\240\\200')"; echo deleteSurrogate=$?
            printf %s ok | keygate add -s "$(printf 'v\\357\\277\\275')" -a a; echo addReplacementChar=$?
            printf 'e1=%s\\n' "$(cat "$HOME/e1")"
            """)
        let v = r.values
        r.assertValues(["addFF": "2", "addFE": "2", "getOverlong": "2", "deleteSurrogate": "2"])
        XCTAssertEqual(v["addReplacementChar"], "0", "control: valid UTF-8, even odd text, is accepted: \(r.summary)")
        XCTAssertTrue(v["e1"]?.contains("not valid UTF-8") == true, r.summary)
        print("HostileInputCLITests: 4 invalid-UTF-8 names refused")
    }
}
