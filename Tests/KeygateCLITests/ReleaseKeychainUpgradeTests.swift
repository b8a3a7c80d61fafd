// A keychain made by the release at 3bd8d10 (Tests/KeygateTests/FormatVectors/
// release-keychain: its make.sh ran that release's keygate and keygate-gatekeeper with its
// shipped vendor policy, `access = user-presence`, and an admin section giving ci-* items
// `access = none`) meets this build and this build's vendor policy, which gives new items
// user-presence through `keygate add` but sets no floor. Every item keeps the protection it
// had: the gated ones still need a password, the ungated one still reads without one. The
// built keygate and keygate-gatekeeper, real processes, pam_matrix with the fixture's
// password, the embedded store, root's gate state as that release left it.
import Foundation
import KeygateTestSupport
import XCTest

final class ReleaseKeychainUpgradeTests: XCTestCase {
    private static let fixture = PackagePaths.root + "/Tests/KeygateTests/FormatVectors/release-keychain"
    private static let password = "release keychain password"
    private var work = ""
    private var environment: [String: String] = [:]

    override func setUpWithError() throws {
        try Requirement.require(PAMMatrix.modulePath != nil, "pam_wrapper's pam_matrix.so (apt-get install libpam-wrapper)")
        let gatekeeper = PackagePaths.buildProducts + "/keygate-gatekeeper"
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary)
                                && FileManager.default.isExecutableFile(atPath: gatekeeper), "the built keygate and keygate-gatekeeper")
        let fm = FileManager.default
        work = NSTemporaryDirectory() + "keygate-upgrade-\(UUID().uuidString)"
        for folder in ["data", "gate/state", "pam", "home", "policy/vendor", "policy/admin", "policy/user"] {
            try fm.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        }
        // The user's data folder and root's gate state, as the release left them (the state under this uid).
        try fm.copyItem(atPath: Self.fixture + "/data/keygate", toPath: work + "/data/keygate")
        try fm.copyItem(atPath: Self.fixture + "/gate/state/0", toPath: work + "/gate/state/\(getuid())")
        for file in ["keys.json", "items.sqlite", "protectors/login.json", "protectors/recovery.json"] {
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: work + "/data/keygate/" + file)
        }
        try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: work + "/data/keygate")
        try fm.setAttributes([.posixPermissions: 0o400], ofItemAtPath: work + "/gate/state/\(getuid())/secret")
        // The upgrade replaces the vendor policy; the administrator's file stays.
        try fm.copyItem(atPath: PackagePaths.root + "/policies/00-default.policy", toPath: work + "/policy/vendor/00-default.policy")
        try fm.copyItem(atPath: Self.fixture + "/admin-10-ci.policy", toPath: work + "/policy/admin/10-ci.policy")
        let module = PAMMatrix.modulePath ?? ""
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        for service in ["keygate", "keygate-passcode"] {
            let passdb = work + "/pam/\(service).passdb"
            try "\(user):\(Self.password):\(service)\n".write(toFile: passdb, atomically: true, encoding: .utf8)
            try "auth required \(module) passdb=\(passdb)\naccount required \(module) passdb=\(passdb)\n"
                .write(toFile: work + "/pam/" + service, atomically: true, encoding: .utf8)
        }
        try "#!/bin/sh\necho prompt >> \"\(work)/prompts\"\nprintf '%s\\n' '\(Self.password)'\n"
            .write(toFile: work + "/askpass", atomically: true, encoding: .utf8)
        try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: work + "/askpass")
        environment = ["PATH": "/usr/bin:/bin", "HOME": work + "/home", "XDG_DATA_HOME": work + "/data", "KEYGATE_STORE": "embedded",
                       "KEYGATE_TEST_GATE_DIR": work + "/gate", "KEYGATE_TEST_GATEKEEPER": gatekeeper,
                       "KEYGATE_TEST_PAM_CONFDIR": work + "/pam", "KEYGATE_TEST_POLICY_ROOT": work + "/policy",
                       "KEYGATE_TEST_KDF": "fast"]
    }

    override func tearDown() {
        _ = try? keygate(["lock", "--all"])
        if !work.isEmpty { try? FileManager.default.removeItem(atPath: work) }
    }

    /// The built keygate in a new session (no controlling terminal), stdin from /dev/null unless `stdin`.
    private func keygate(_ args: [String], askpass: Bool = false, stdin: String? = nil) throws -> ProcessResult {
        var env = environment
        if askpass { env["KEYGATE_ASKPASS"] = work + "/askpass" }
        return try Subprocess.run(["setsid", "-w", PackagePaths.keygateBinary] + args, stdin: Data((stdin ?? "").utf8),
                                  environment: env, timeout: 60)
    }

    private func prompts() -> Int {
        ((try? String(contentsOfFile: work + "/prompts", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func test_itemsTheReleaseMade_keepTheirProtection_afterTheUpgrade() throws {
        let list = try keygate(["list"])
        XCTAssertEqual(list.status, 0, list.summary)
        let blocks = list.out.components(separatedBy: "class: ").filter { !$0.isEmpty }
        func block(_ service: String) -> String { blocks.first { $0.contains("service: \(service)\n") } ?? "" }
        XCTAssertTrue(block("vpn").contains("    access: user-presence\n"), "the vendor default it got: \(list.out)")
        XCTAssertTrue(block("bank").contains("    access: device-passcode\n"), list.out)
        XCTAssertTrue(block("ci-deploy").contains("    access: none\n"), list.out)
        XCTAssertFalse(list.out.contains("access-at-read"), "no floor in this build's vendor policy: \(list.out)")

        let unlock = try keygate(["unlock"], askpass: true)
        XCTAssertEqual(unlock.status, 0, "the release's login protector opens: \(unlock.summary)")
        let unlockPrompts = prompts()

        // While the keychain is unlocked, with no terminal and no askpass: the gated items still refuse.
        for service in ["vpn", "bank"] {
            let gated = try keygate(["get", "-s", service, "-a", "alice"])
            XCTAssertEqual(gated.status, 36, "\(service) is still gated after the upgrade: \(gated.summary)")
            XCTAssertEqual(gated.out, "", gated.summary)
        }
        let ci = try keygate(["get", "-s", "ci-deploy", "-a", "runner"])
        XCTAssertEqual(ci.status, 0, ci.summary)
        XCTAssertEqual(ci.out, "ci secret", "the ungated item still reads without a password")

        // Replacing the secret without --access keeps the item's access, and says so.
        let update = try keygate(["add", "-U", "-s", "vpn", "-a", "alice"], stdin: "vpn secret 2")
        XCTAssertEqual(update.status, 0, update.summary)
        XCTAssertTrue(update.err.hasPrefix("keygate: stored vpn/alice with access user-presence: the access it had"), update.summary)
        XCTAssertEqual(try keygate(["get", "-s", "vpn", "-a", "alice"]).status, 36, "still gated after add -U")

        // With the password, each reads: one prompt each.
        let vpn = try keygate(["get", "-s", "vpn", "-a", "alice"], askpass: true)
        XCTAssertEqual(vpn.status, 0, vpn.summary)
        XCTAssertEqual(vpn.out, "vpn secret 2")
        let bank = try keygate(["get", "-s", "bank", "-a", "alice"], askpass: true)
        XCTAssertEqual(bank.status, 0, bank.summary)
        XCTAssertEqual(bank.out, "bank secret")
        XCTAssertEqual(prompts(), unlockPrompts + 2, "one presence prompt for each gated read")
    }

    func test_theFixture_isWhatTheReleaseListed() throws {
        // make.sh kept the release's own `keygate list`: the same items, the same flags.
        let released = try String(contentsOfFile: Self.fixture + "/list-by-the-release.txt", encoding: .utf8)
        XCTAssertTrue(released.contains("service: vpn\n    account: alice\n    label: vpn/alice\n    accessible: when-unlocked\n"
                                        + "    access: user-presence\n"), released)
        XCTAssertTrue(released.contains("service: ci-deploy\n    account: runner\n    label: ci-deploy/runner\n"
                                        + "    accessible: when-unlocked\n    created:"), "the release listed no access for it: \(released)")
        let now = try keygate(["list"])
        for service in ["bank", "ci-deploy", "vpn"] {
            XCTAssertTrue(now.out.contains("service: \(service)\n"), now.summary)
        }
    }
}
