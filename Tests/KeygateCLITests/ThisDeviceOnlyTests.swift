// this-device-only end to end as root, who derives the device key from the host
// key directly (other users receive it from pam_keygate at login). A host-key
// rotation stands in for "the store was copied to another host". The host key
// lives at a temporary path (a test-hook build reads KEYGATE_TEST_HOST_KEY).
import Foundation
import KeygateTestSupport
import XCTest

final class ThisDeviceOnlyTests: XCTestCase {
    func test_thisDeviceOnly_needsTheHostKey_andDiesWhenItRotates() throws {
        let sandbox = try RootKeychainSandbox(prefix: "keygate-tdo")
        defer { sandbox.remove() }
        let script = """
            keygate lock --all
            printf %s x | keygate add -s tdo -a a --accessible when-unlocked-this-device-only; echo nohost=$?
            keygate setup-host >/dev/null; echo setup=$?
            printf %s device-secret | keygate add -s tdo -a a --accessible when-unlocked-this-device-only; echo add=$?
            printf %s plain | keygate add -s tdo -a p; echo addp=$?
            printf 'v1=%s\\n' "$(keygate get -s tdo -a a)"
            keygate setup-host --rotate 2>/dev/null >/dev/null; echo rotate=$?
            keygate get -s tdo -a a; echo after=$?
            printf 'plain=%s\\n' "$(keygate get -s tdo -a p)"
            keygate list -s tdo | grep accessible
            keygate lock --all
            """
        let r = try sandbox.runInSecretSession(script)
        let v = r.values
        let summary = r.summary
        XCTAssertEqual(v["nohost"], "53", summary)
        XCTAssertTrue(r.err.contains("setup-host"), "says how to enable it: \(summary)")
        XCTAssertEqual(v["setup"], "0", summary)
        XCTAssertEqual(v["add"], "0", summary)
        XCTAssertEqual(v["v1"], "device-secret", summary)
        XCTAssertEqual(v["rotate"], "0", summary)
        XCTAssertEqual(v["after"], "44", "a rotated host key invalidates this-device-only items: \(summary)")
        XCTAssertTrue(r.err.contains("invalidated"), summary)
        XCTAssertEqual(v["plain"], "plain", "other items survive a rotation: \(summary)")
        XCTAssertTrue(r.out.contains("accessible: when-unlocked-this-device-only"), summary)
    }
}
