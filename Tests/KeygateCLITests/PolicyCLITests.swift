// `keygate policy check|explain|list` through the built binary, with the policy
// folders redirected by KEYGATE_TEST_POLICY_ROOT (honoured by test-hook builds only)
// to root-owned temporary folders: exit codes, the OK line, errors with
// file:line:column, the origin of each explained setting, warnings for ignored user
// loosening, and fail-closed explain (53) under a corrupt admin file.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class PolicyCLITests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var root = ""

    override func setUpWithError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary),
                                "the built keygate binary at \(PackagePaths.keygateBinary) (run swift build)")
        var template = Array((NSTemporaryDirectory() + "/kg-policy-cli.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw CLIFailure("mkdtemp failed") }
        root = String(cString: made)
        for folder in ["vendor", "admin", "user"] {
            try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o755])
        }
    }

    override func tearDown() {
        if !root.isEmpty { try? FileManager.default.removeItem(atPath: root) }
    }

    @discardableResult
    private func write(_ folder: String, _ name: String, _ text: String) throws -> String {
        let path = root + "/" + folder + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o644)
        return path
    }

    private func policy(_ args: String...) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["KEYGATE_TEST_POLICY_ROOT"] = root
        return try Subprocess.run([PackagePaths.keygateBinary, "policy"] + args, environment: env, timeout: 30)
    }

    private func installShippedDefault() throws -> String {
        let text = try String(contentsOfFile: PackagePaths.root + "/policies/00-default.policy", encoding: .utf8)
        return try write("vendor", "00-default.policy", text)
    }

    func test_check_allInstalled_printsOK_andExits0() throws {
        _ = try installShippedDefault()
        try write("admin", "10-vpn.policy", "[service \"vpn*\"]\nreuse-duration = 2m\n")
        let r = try policy("check")
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "OK: 2 files\n")
    }

    func test_check_givenFiles_listsEveryErrorWithLocation_andExits206() throws {
        let good = try write("admin", "good.policy", "[default]\nmax-tries = 2\n")
        let bad = try write("admin", "bad.policy", "[default\nlockout = soon\n")
        let r = try policy("check", good, bad)
        XCTAssertEqual(r.status, 206, r.out + r.err)
        XCTAssertTrue(r.err.contains("\(bad):1:9: unterminated section header: expected `]`"), r.err)
        XCTAssertTrue(r.err.contains("\(bad):2:11: bad value for lockout"), r.err)
        XCTAssertFalse(r.err.contains(good), "a valid file is not reported")
        let ok = try policy("check", good)
        XCTAssertEqual(ok.status, 0)
        XCTAssertEqual(ok.out, "OK: 1 file\n")
    }

    func test_check_reportsARefusedInstalledFile() throws {
        let path = try write("admin", "10.policy", "[default]\nmax-tries = 2\n")
        chmod(path, 0o666)
        let r = try policy("check")
        XCTAssertEqual(r.status, 206)
        XCTAssertTrue(r.err.contains("\(path): refused: \(path) is writable by others"), r.err)
    }

    func test_explain_printsEachSettingWithFileLineAndSection() throws {
        let vendor = try installShippedDefault()
        let admin = try write("admin", "20-vpn.policy", "[service \"vpn*\"]\naccess = device-passcode\nprompt = \"Connect to the VPN\"\n")
        let user = try write("user", "me.policy", "[default]\nreuse-duration = 60\nlock-after = 2h\n")
        let r = try policy("explain", "-s", "vpn-office", "-a", "alice")
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.first, "policy for service \"vpn-office\", account \"alice\" (3 files read):")
        func line(_ key: String) -> String { lines.first { $0.hasPrefix("  \(key) ") } ?? "" }
        for key in ["default-access", "minimum-access"] {   // `access =` sets both
            XCTAssertTrue(line(key).contains(" device-passcode "), line(key))
            XCTAssertTrue(line(key).hasSuffix("\(admin):2 [service \"vpn*\"] (admin)"), line(key))
        }
        XCTAssertTrue(line("prompt").contains("\"Connect to the VPN\""))
        XCTAssertTrue(line("reuse-duration").contains(" 60 "), line("reuse-duration"))
        XCTAssertTrue(line("reuse-duration").hasSuffix("\(user):2 [default] (user)"))
        XCTAssertTrue(line("reuse-scope").hasSuffix("(vendor)") && line("reuse-scope").contains(vendor))
        XCTAssertTrue(line("lock-after").contains(" 900 "), "the user's longer lock-after is ignored: \(line("lock-after"))")
        XCTAssertTrue(line("accessible").hasSuffix(" default"), line("accessible"))
        XCTAssertTrue(line("finger-unlock").contains(" 172800 ") && line("finger-unlock").hasSuffix(" default"), line("finger-unlock"))
        XCTAssertEqual(lines.count, 14, "one line per key, host-protector and finger-unlock included")
        XCTAssertTrue(r.err.contains("warning: \(user):3: ignored lock-after = 7200 in [default]"), r.err)
    }

    func test_explain_failsClosed_exit53_namingTheCorruptAdminFile() throws {
        _ = try installShippedDefault()
        let broken = try write("admin", "30-broken.policy", "[service \"x\"]\nmax-tries = lots\n")
        let r = try policy("explain", "-s", "anything")
        XCTAssertEqual(r.status, 53, r.out + r.err)
        XCTAssertTrue(r.err.contains("\(broken):2:13"), r.err)
        XCTAssertTrue(r.err.contains("refuses"), r.err)
        XCTAssertEqual(r.out, "")
    }

    func test_list_showsFilesInReadingOrderWithState() throws {
        try write("vendor", "00.policy", "[default]\n")
        try write("admin", "b.policy", "[default]\nfoo = 1\n")
        try write("admin", "a.policy", "[service \"a\"]\n")
        try FileManager.default.removeItem(atPath: root + "/user")
        let r = try policy("list")
        XCTAssertEqual(r.status, 0, r.err)
        let lines = r.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 4, r.out)
        XCTAssertEqual(lines[0], "vendor  \(root)/vendor/00.policy: read")
        XCTAssertEqual(lines[1], "admin   \(root)/admin/a.policy: read")
        XCTAssertTrue(lines[2].hasPrefix("admin   \(root)/admin/b.policy: error: \(root)/admin/b.policy:2:1: unknown key"), lines[2])
        XCTAssertEqual(lines[3], "user    \(root)/user: absent", "a missing folder is listed as absent")
    }

    func test_usageErrors_exit2() throws {
        XCTAssertEqual(try policy().status, 2)
        XCTAssertEqual(try policy("frob").status, 2)
        XCTAssertEqual(try policy("explain").status, 2, "explain needs -s")
        XCTAssertEqual(try policy("list", "extra").status, 2)
    }
}

private struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
