// this-device-only end to end as root, who derives the device key from the host
// key directly (other users receive it from pam_keygate at login). A host-key
// rotation stands in for "the store was copied to another host". The host key
// lives at a temporary path (a test-hook build reads KEYGATE_TEST_HOST_KEY).
import Foundation
import KeygateTestSupport
import XCTest

final class ThisDeviceOnlyTests: XCTestCase {
    func test_thisDeviceOnly_needsTheHostKey_andDiesWhenItRotates() throws {
        try Requirement.require(Requirement.isRoot, "root, who derives the device key from the host key")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary), "the built keygate binary")
        let pam = try PAMMatrix(service: "keygate", user: "root", password: "root-test-pw")
        let dir = NSTemporaryDirectory() + "keygate-tdo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir + "/home", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "#!/bin/sh\necho prompt >> \(dir)/prompts\necho root-test-pw\n"
            .write(toFile: dir + "/askpass", atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: dir + "/askpass")
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
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = dir + "/home"
        env["XDG_DATA_HOME"] = dir + "/data"
        env["KEYGATE_TEST_PAM_CONFDIR"] = pam.confdir
        env["KEYGATE_TEST_KDF"] = "fast"
        env["KEYGATE_TEST_POLICY_ROOT"] = EmptyPolicyRoot.path
        env["KEYGATE_TEST_HOST_KEY"] = dir + "/hostkey/host.key"
        env["KEYGATE_ASKPASS"] = dir + "/askpass"
        env["PATH"] = PackagePaths.buildProducts + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        let r = try Subprocess.run(["setsid", "-w", PackagePaths.scripts + "/secret-session", "--ephemeral", "bash", "-c", script],
                                   environment: env)
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
