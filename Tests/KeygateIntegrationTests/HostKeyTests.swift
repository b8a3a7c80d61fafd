// HostKey against the real file system, as root: the key file's owner, mode and
// size; create is idempotent, rotate replaces the bytes; symbolic links, wrong
// modes, wrong sizes, foreign owners and writable folders are refused with a
// message naming the path and the fix. Each test works in its own temporary
// folder (the path-explicit forms, or KEYGATE_TEST_HOST_KEY for the public ones),
// never in /var/lib/keygate. Also DeviceKey.forCurrentUser through the real
// kernel keyring and the redirected host key.
import Foundation
import Glibc
import KeygateTestSupport
import XCTest
@testable import KeygateCore

final class HostKeyTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var folder = ""
    private var keyPath: String { folder + "/keygate/host.key" }

    override func setUpWithError() throws {
        try Requirement.require(Requirement.isRoot, "root, to own the host key (CI runs as root)")
        var template = Array((NSTemporaryDirectory() + "/kg-hostkey.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw TestFailure("mkdtemp failed in \(NSTemporaryDirectory())") }
        folder = String(cString: made)
    }

    override func tearDown() {
        unsetenv("KEYGATE_TEST_HOST_KEY")
        if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) }
    }

    // MARK: helpers

    private func info(_ path: String) throws -> stat {
        var s = stat()
        guard lstat(path, &s) == 0 else { throw TestFailure("lstat \(path): errno \(errno)") }
        return s
    }

    private func bytes(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func assertRefused<T>(_ body: @autoclosure () throws -> T, mentioning needles: [String],
                               file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try body(), file: file, line: line) { error in
            guard let error = error as? KeychainError else { return XCTFail("not a KeychainError: \(error)", file: file, line: line) }
            for needle in needles {
                XCTAssertTrue(error.message.contains(needle), "'\(needle)' missing from: \(error.message)", file: file, line: line)
            }
        }
    }

    // MARK: create, read, rotate

    func test_create_makesRootOwned0400File_of32RandomBytes_inA0700Folder() throws {
        XCTAssertTrue(try HostKey.create(at: keyPath, environment: .process()))
        let file = try info(keyPath)
        XCTAssertEqual(file.st_mode & S_IFMT, S_IFREG)
        XCTAssertEqual(file.st_mode & 0o7777, 0o400)
        XCTAssertEqual(file.st_uid, 0)
        XCTAssertEqual(file.st_size, 32)
        let dir = try info(folder + "/keygate")
        XCTAssertEqual(dir.st_mode & 0o7777, 0o700)
        XCTAssertEqual(dir.st_uid, 0)
        XCTAssertNotEqual(try bytes(keyPath), [UInt8](repeating: 0, count: 32))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: folder + "/keygate")
        XCTAssertEqual(leftovers, ["host.key"], "no temporary file is left behind")
    }

    func test_create_whenPresent_returnsFalse_andKeepsTheKey() throws {
        XCTAssertTrue(try HostKey.create(at: keyPath, environment: .process()))
        let before = try bytes(keyPath)
        XCTAssertFalse(try HostKey.create(at: keyPath, environment: .process()))
        XCTAssertEqual(try bytes(keyPath), before)
    }

    func test_read_returnsTheFileBytes_andNilWhenAbsent() throws {
        XCTAssertNil(try HostKey.read(at: keyPath, environment: .process()))
        XCTAssertNil(try HostKey.read(at: folder + "/no-such-folder/host.key", environment: .process()))
        _ = try HostKey.create(at: keyPath, environment: .process())
        let key = try XCTUnwrap(try HostKey.read(at: keyPath, environment: .process()))
        XCTAssertEqual(key.unprotectedCopy(), try bytes(keyPath))
    }

    func test_rotate_replacesTheBytes_andKeeps0400Root() throws {
        _ = try HostKey.create(at: keyPath, environment: .process())
        let before = try bytes(keyPath)
        try HostKey.rotate(at: keyPath, environment: .process())
        let after = try bytes(keyPath)
        XCTAssertEqual(after.count, 32)
        XCTAssertNotEqual(after, before)
        let file = try info(keyPath)
        XCTAssertEqual(file.st_mode & 0o7777, 0o400)
        XCTAssertEqual(file.st_uid, 0)
        XCTAssertEqual(try HostKey.read(at: keyPath, environment: .process())?.unprotectedCopy(), after)
    }

    func test_rotate_whenAbsent_createsTheKey() throws {
        try HostKey.rotate(at: keyPath, environment: .process())
        XCTAssertEqual(try bytes(keyPath).count, 32)
    }

    // MARK: refusals

    func test_symlinkAtPath_isRefused_byCreateRotateAndRead_andItsTargetIsUntouched() throws {
        try FileManager.default.createDirectory(atPath: folder + "/keygate", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let target = folder + "/target"
        try Data(repeating: 0x41, count: 32).write(to: URL(fileURLWithPath: target))
        chmod(target, 0o400)
        XCTAssertEqual(symlink(target, keyPath), 0)

        assertRefused(try HostKey.create(at: keyPath, environment: .process()), mentioning: [keyPath, "symbolic link"])
        assertRefused(try HostKey.rotate(at: keyPath, environment: .process()), mentioning: [keyPath, "symbolic link"])
        assertRefused(try HostKey.read(at: keyPath, environment: .process()), mentioning: [keyPath, "symbolic link"])
        XCTAssertEqual(try bytes(target), [UInt8](repeating: 0x41, count: 32), "the link's target is not written")
        XCTAssertEqual(try info(keyPath).st_mode & S_IFMT, S_IFLNK, "the link is left for the admin to inspect")
    }

    func test_wrongMode_isRefused_withThePathAndTheChmodFix() throws {
        _ = try HostKey.create(at: keyPath, environment: .process())
        XCTAssertEqual(chmod(keyPath, 0o644), 0)
        assertRefused(try HostKey.read(at: keyPath, environment: .process()), mentioning: [keyPath, "0644", "chmod 0400"])
        assertRefused(try HostKey.create(at: keyPath, environment: .process()), mentioning: [keyPath, "0644"])
        XCTAssertEqual(chmod(keyPath, 0o600), 0)
        XCTAssertNotNil(try HostKey.read(at: keyPath, environment: .process()), "0600 is accepted too")
    }

    func test_wrongSize_isRefused_withThePathAndTheRotateFix_andRotateRepairsIt() throws {
        try HostKey.rotate(at: keyPath, environment: .process())
        XCTAssertEqual(chmod(keyPath, 0o600), 0)
        try Data(repeating: 1, count: 31).write(to: URL(fileURLWithPath: keyPath))
        assertRefused(try HostKey.read(at: keyPath, environment: .process()), mentioning: [keyPath, "31 bytes", "setup-host --rotate"])
        assertRefused(try HostKey.create(at: keyPath, environment: .process()), mentioning: [keyPath, "31 bytes"])
        try HostKey.rotate(at: keyPath, environment: .process())
        XCTAssertEqual(try HostKey.read(at: keyPath, environment: .process())?.count, 32)
    }

    func test_fileNotOwnedByRoot_isRefused() throws {
        _ = try HostKey.create(at: keyPath, environment: .process())
        XCTAssertEqual(chown(keyPath, 1, 1), 0)
        assertRefused(try HostKey.read(at: keyPath, environment: .process()), mentioning: [keyPath, "not root"])
        assertRefused(try HostKey.create(at: keyPath, environment: .process()), mentioning: [keyPath, "not root"])
        assertRefused(try HostKey.rotate(at: keyPath, environment: .process()), mentioning: [keyPath, "not root"])
    }

    func test_folderWritableByOthers_isRefused_andNotChanged() throws {
        let shared = folder + "/shared"
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(shared, 0o1777), 0)
        assertRefused(try HostKey.create(at: shared + "/host.key", environment: .process()), mentioning: [shared, "chmod 0700"])
        XCTAssertEqual(try info(shared).st_mode & 0o7777, 0o1777, "a shared folder such as /tmp is never narrowed")
        XCTAssertFalse(FileManager.default.fileExists(atPath: shared + "/host.key"))
    }

    // MARK: the public forms, redirected

    func test_testHookRedirect_sendsPublicCreateAndReadToTheGivenPath() throws {
        XCTAssertEqual(HostKey.path(.process()), "/var/lib/keygate/host.key", "the fixed path without the hook")
        setenv("KEYGATE_TEST_HOST_KEY", keyPath, 1)
        XCTAssertEqual(HostKey.path(.process()), keyPath)
        XCTAssertTrue(try HostKey.create(environment: .process()))
        XCTAssertFalse(try HostKey.create(environment: .process()))
        XCTAssertEqual(try HostKey.read(environment: .process())?.unprotectedCopy(), try bytes(keyPath))
    }

    func test_forCurrentUser_asRoot_derivesFromTheHostKey_andRotationChangesIt() throws {
        setenv("KEYGATE_TEST_HOST_KEY", keyPath, 1)
        XCTAssertNil(DeviceKey.forCurrentUser(uid: 0, environment: .process()), "no host key, no device key")
        _ = try HostKey.create(environment: .process())
        let machineID = try DeviceKey.machineID()
        let hostKey = try XCTUnwrap(try HostKey.read(environment: .process()))
        let expected = try DeviceKey.derive(hostKey: hostKey, uid: 0, machineID: machineID)
        let got = try XCTUnwrap(DeviceKey.forCurrentUser(uid: 0, environment: .process()))
        XCTAssertTrue(got.constantTimeEquals(expected))
        try HostKey.rotate(environment: .process())
        let rotated = try XCTUnwrap(DeviceKey.forCurrentUser(uid: 0, environment: .process()))
        XCTAssertFalse(rotated.constantTimeEquals(expected), "a rotated host key gives another device key")
    }

    func test_forCurrentUser_asUser_readsTheKernelKeyring_handOver() throws {
        let usable = (try? KernelKeyring.keyringID(.userKeyring, create: true)) != nil
        try Requirement.require(usable, "the kernel keyring (add_key and keyctl allowed)")
        // A uid no real user has: its "device" entry lives under this process's @u for the test only.
        let uid = UInt32.random(in: 3_000_000...3_900_000)
        let cache = KeyCache(uid: uid)
        defer { cache.evict(DeviceKey.cacheName) }
        XCTAssertNil(DeviceKey.forCurrentUser(uid: uid, environment: .process()), "nothing handed over yet")
        var bytes = (0..<32).map { UInt8($0) &* 3 }
        let handed = try SecureBytes(consuming: &bytes)
        try cache.store(DeviceKey.cacheName, key: handed, timeout: 60)
        let got = try XCTUnwrap(DeviceKey.forCurrentUser(uid: uid, environment: .process()))
        XCTAssertTrue(got.constantTimeEquals(handed))
    }
}

/// A step of a test that could not be done (not a Keygate failure).
private struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
