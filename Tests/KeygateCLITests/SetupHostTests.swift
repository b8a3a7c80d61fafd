// `keygate setup-host` through the real binary: as root it creates the host key
// (redirected into a temporary folder with KEYGATE_TEST_HOST_KEY, which only
// test-hook builds honour), says "already present" the second time, and --rotate
// replaces the bytes with a warning; as a real non-root user it exits 206 and
// says to run it as root.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest

final class SetupHostTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var folder = ""
    private var keyPath: String { folder + "/keygate/host.key" }

    override func setUpWithError() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary),
                                "the built keygate binary at \(PackagePaths.keygateBinary) (run swift build)")
        var template = Array((NSTemporaryDirectory() + "/kg-setup-host.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed in \(NSTemporaryDirectory())") }
        folder = String(cString: made)
    }

    override func tearDown() {
        if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) }
    }

    private func setupHost(_ args: String...) throws -> ProcessResult {
        var env = ProcessInfo.processInfo.environment
        env["KEYGATE_TEST_HOST_KEY"] = keyPath
        return try Subprocess.run([PackagePaths.keygateBinary, "setup-host"] + args, environment: env, timeout: 30)
    }

    private func keyBytes() throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: keyPath)))
    }

    func test_setupHost_asRoot_createsThe0400Key_thenSaysAlreadyPresent() throws {
        try Requirement.require(Requirement.isRoot, "root, to create the host key (CI runs as root)")
        let first = try setupHost()
        XCTAssertEqual(first.status, 0, first.err)
        XCTAssertEqual(first.out, "created \(keyPath)\n")
        var info = stat()
        XCTAssertEqual(lstat(keyPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o7777, 0o400)
        XCTAssertEqual(info.st_uid, 0)
        XCTAssertEqual(try keyBytes().count, 32)

        let before = try keyBytes()
        let second = try setupHost()
        XCTAssertEqual(second.status, 0, second.err)
        XCTAssertTrue(second.out.contains("already present"), second.out)
        XCTAssertEqual(try keyBytes(), before, "a second run keeps the key")
    }

    func test_setupHost_rotate_replacesTheKey_andWarnsOfInvalidation() throws {
        try Requirement.require(Requirement.isRoot, "root, to create the host key (CI runs as root)")
        XCTAssertEqual(try setupHost().status, 0)
        let before = try keyBytes()
        let r = try setupHost("--rotate")
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertTrue(r.out.contains("replaced \(keyPath)"), r.out)
        XCTAssertTrue(r.err.contains("invalidated"), "the warning names the consequence: \(r.err)")
        let after = try keyBytes()
        XCTAssertEqual(after.count, 32)
        XCTAssertNotEqual(after, before)
    }

    func test_setupHost_onABadKeyFile_exitsNonZero_namingThePath() throws {
        try Requirement.require(Requirement.isRoot, "root, to create the host key (CI runs as root)")
        XCTAssertEqual(try setupHost().status, 0)
        XCTAssertEqual(chmod(keyPath, 0o644), 0)
        let r = try setupHost()
        XCTAssertEqual(r.status, 53, r.err)
        XCTAssertTrue(r.err.contains(keyPath) && r.err.contains("chmod 0400"), r.err)
    }

    func test_setupHost_asNonRootUser_exits206_sayingRunAsRoot() throws {
        try Requirement.require(Requirement.isRoot, "root, to create a test user (CI runs as root)")
        let user = try TestUser.create()
        defer { user.remove() }
        // A folder the user may enter, so the refusal is keygate's, not the file system's.
        XCTAssertEqual(chmod(folder, 0o755), 0)
        let r = try UserSession.run(as: user, script: "keygate setup-host; echo rc=$?",
                                    environment: ["KEYGATE_TEST_HOST_KEY": keyPath])
        XCTAssertTrue(r.out.contains("rc=206"), r.out + r.err)
        XCTAssertTrue(r.err.contains("run as root"), r.err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: keyPath), "nothing was created")
    }

    func test_help_listsSetupHost() throws {
        let r = try Subprocess.run([PackagePaths.keygateBinary, "help"], timeout: 30)
        XCTAssertEqual(r.status, 0)
        XCTAssertTrue(r.out.contains("  setup-host"), r.out)
    }
}

/// A step of a test that could not be done (not a Keygate failure).
private struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
