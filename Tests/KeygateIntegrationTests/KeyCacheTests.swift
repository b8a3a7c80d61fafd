// Integration tests of KeyCache against the REAL kernel keyring: round trip,
// kernel timeouts, permissions, the process-keyring staging, eviction, listing,
// visibility to other processes of the same user and refusal to another uid.
// Every test uses names with a random suffix and cleans up after itself.
import CKeyutils
import Foundation
import Glibc
import KeygateTestSupport
import XCTest
@testable import KeygateCore

final class KeyCacheTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var cleanups: [() -> Void] = []

    override func setUpWithError() throws {
        let usable = (try? KernelKeyring.keyringID(.userKeyring, create: true)) != nil
        try Requirement.require(usable, "the kernel keyring (add_key and keyctl allowed, as outside a default-seccomp container)")
    }

    override func tearDown() {
        cleanups.forEach { $0() }
        cleanups = []
    }

    // MARK: helpers

    private func uniqueName(_ label: String = #function) -> String {
        let tag = label.prefix(while: { $0 != "(" })
        return "test-\(tag)-\(UUID().uuidString.prefix(8).lowercased())"
    }

    /// A cache for this uid whose named keys are evicted after the test.
    private func cache(evicting names: String..., uid: UInt32 = getuid()) -> KeyCache {
        let cache = KeyCache(uid: uid)
        for name in names { cleanups.append { cache.evict(name) } }
        return cache
    }

    private func secure(_ text: String) throws -> SecureBytes {
        var bytes = Array(text.utf8)
        return try SecureBytes(consuming: &bytes)
    }

    private func serial(of name: String, in cache: KeyCache) throws -> KeySerial {
        try KernelKeyring.search(.userKeyring, type: "user", description: cache.description(of: name))
    }

    /// Whether this process's session keyring reaches @u, as pam_keyinit and the
    /// kernel's default user-session keyring arrange. When it does not (a bare
    /// `keyctl session -`), child processes do not possess @u's keys and cannot read
    /// or describe them by serial; Keygate itself links @u into its process keyring.
    private var sessionReachesUserKeyring: Bool {
        keyctl_search(KEY_SPEC_SESSION_KEYRING, "keyring", "_uid.\(getuid())", 0) >= 0
    }

    /// argv for a child `keyctl` that possesses @u's keys: as is when our session
    /// keyring reaches @u, else in a fresh session keyring linked to @u (pam_keyinit's
    /// recipe), so the test checks the keys and not this environment's session setup.
    private func possessingChild(_ argv: [String]) -> [String] {
        if sessionReachesUserKeyring { return argv }
        return ["keyctl", "session", "-", "sh", "-c", "keyctl link @u @s >/dev/null && exec \"$@\"", "sh"] + argv
    }

    /// The timeout column of /proc/keys for a key ("49s", "2m", "perm", "expd").
    private func procKeysTimeout(_ serial: KeySerial) throws -> String? {
        // To the end: String(contentsOfFile:) can stop at the first page of a /proc file.
        let data = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/keys"), "/proc/keys").readDataToEndOfFile()
        let text = String(decoding: data, as: UTF8.self)
        let id = String(format: "%08x", serial.rawValue)
        for line in text.split(separator: "\n") where line.hasPrefix(id + " ") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            return fields.count > 3 ? String(fields[3]) : nil
        }
        return nil
    }

    // MARK: round trip and timeouts

    func test_load_returnsIdenticalBytes_afterStore() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        let key = try SecureBytes.random(count: 32)
        try cache.store(name, key: key, timeout: 300)
        let loaded = try XCTUnwrap(cache.load(name))
        XCTAssertTrue(loaded.key.constantTimeEquals(key))
        let expiresAt = try XCTUnwrap(loaded.expiresAt)
        XCTAssertEqual(Double(expiresAt), Date().timeIntervalSince1970 + 300, accuracy: 3)
    }

    /// A payload is read in one call into a buffer of 256 bytes when it fits, and read again in
    /// full when it does not: every size around that edge comes back whole and exact.
    func test_payloads_aroundTheReadBuffersSize_comeBackWhole() throws {
        for size in [1, 40, 255, 256, 257, 1000, 4096] {
            let description = "\(uniqueName())-\(size)"
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ size) }
            let serial = try payload.withUnsafeBytes { try KernelKeyring.addKey(type: "user", description: description, payload: $0,
                                                                                into: .processKeyring) }
            cleanups.append { _ = try? KernelKeyring.invalidate(serial) }
            let read = try KernelKeyring.withPayload(of: serial) { Array($0) }
            XCTAssertEqual(read, payload, "a payload of \(size) bytes")
        }
    }

    func test_load_returnsNilExpiry_whenStoredWithoutTimeout() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("no-timeout"), timeout: 0)
        let loaded = try XCTUnwrap(cache.load(name))
        XCTAssertNil(loaded.expiresAt)
        XCTAssertEqual(loaded.key.unprotectedCopy(), Array("no-timeout".utf8))
        XCTAssertEqual(try procKeysTimeout(serial(of: name, in: cache)), "perm")
    }

    func test_load_returnsNil_forNameNeverStored() {
        XCTAssertNil(KeyCache().load(uniqueName()))
    }

    func test_load_returnsNil_afterKernelTimeout_andStoreWorksAgain() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("short-lived"), timeout: 1)
        XCTAssertNotNil(cache.load(name))
        let staleSerial = try serial(of: name, in: cache)
        // The kernel expires it at a whole-second boundary, up to 1 s from now: wait for that, not longer.
        XCTAssertTrue(Polling.waitUntil(timeout: 3) { cache.load(name) == nil }, "the 1 s timeout never expired the key")
        XCTAssertNil(cache.load(name))
        // The kernel, not our payload check, refuses it: a read gives EKEYEXPIRED.
        XCTAssertThrowsError(try KernelKeyring.withPayload(of: staleSerial) { $0.count }) {
            XCTAssertEqual(($0 as? KeyringErrno)?.isExpired, true, "\($0)")
        }
        XCTAssertFalse(cache.entries().contains { $0.name == name })

        try cache.store(name, key: try secure("fresh"), timeout: 60)
        XCTAssertEqual(cache.load(name)?.key.unprotectedCopy(), Array("fresh".utf8))
    }

    func test_restore_resetsTimeoutToNewValue() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("a"), timeout: 3000)
        try cache.store(name, key: try secure("b"), timeout: 40)
        var entry = try XCTUnwrap(cache.entries().first { $0.name == name })
        let shorter = try XCTUnwrap(entry.secondsLeft)
        XCTAssertTrue((38...40).contains(shorter), "seconds left \(shorter)")
        let kernelShort = try procKeysTimeout(serial(of: name, in: cache))
        XCTAssertTrue(["40s", "39s", "38s"].contains(kernelShort ?? ""), "kernel timeout \(kernelShort ?? "none")")
        XCTAssertEqual(cache.load(name)?.key.unprotectedCopy(), Array("b".utf8))

        try cache.store(name, key: try secure("c"), timeout: 50)
        entry = try XCTUnwrap(cache.entries().first { $0.name == name })
        let longer = try XCTUnwrap(entry.secondsLeft)
        XCTAssertTrue((48...50).contains(longer), "seconds left \(longer)")
        let kernelLong = try procKeysTimeout(serial(of: name, in: cache))
        XCTAssertTrue(["50s", "49s", "48s"].contains(kernelLong ?? ""), "kernel timeout \(kernelLong ?? "none")")
    }

    func test_restore_leavesDisplacedKeyUnreadable() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("old"), timeout: 60)
        let old = try serial(of: name, in: cache)
        try cache.store(name, key: try secure("new"), timeout: 60)
        let new = try serial(of: name, in: cache)
        XCTAssertNotEqual(old, new)
        // Possessor-only and in no keyring any more: not possessed, so EACCES (or ENOKEY
        // once the kernel has collected it).
        XCTAssertThrowsError(try KernelKeyring.withPayload(of: old) { $0.count }) {
            let error = $0 as? KeyringErrno
            XCTAssertTrue(error?.isAccessDenied == true || error?.isNoKey == true, "\($0)")
        }
        XCTAssertFalse(try KernelKeyring.contents(of: .userKeyring).contains(old))
        XCTAssertEqual(cache.load(name)?.key.unprotectedCopy(), Array("new".utf8))
    }

    // MARK: permissions and staging

    func test_storedKey_isPossessorOnly() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("perm"), timeout: 60)
        let serial = try serial(of: name, in: cache)
        let info = try KernelKeyring.describe(serial)
        XCTAssertEqual(info.type, "user")
        XCTAssertEqual(info.uid, getuid())
        XCTAssertEqual(info.permissions.rawValue, 0x3F00_0000)

        // The same seen by another process, through keyutils' own tool.
        let result = try Subprocess.run(possessingChild(["keyctl", "rdescribe", String(serial.rawValue)]))
        XCTAssertEqual(result.status, 0, result.err)
        XCTAssertEqual(result.out.trimmingCharacters(in: .whitespacesAndNewlines),
                       "user;\(getuid());\(info.gid);3f000000;keygate:\(getuid()):\(name)")
    }

    func test_store_leavesNoKeyInProcessKeyring() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("staged"), timeout: 60)
        let published = try serial(of: name, in: cache)
        let inProcessKeyring = try KernelKeyring.contents(of: .processKeyring)
        XCTAssertFalse(inProcessKeyring.contains(published))
        let description = try cache.description(of: name)
        for serial in inProcessKeyring {
            XCTAssertNotEqual((try? KernelKeyring.describe(serial))?.description, description)
        }
        // And @u holds it directly, not through some other keyring.
        XCTAssertTrue(try KernelKeyring.contents(of: .userKeyring).contains(published))
    }

    func test_concurrentStoresOfOneName_leaveOneKeyWithItsTimeout() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            var bytes = [UInt8(index)]
            guard let key = try? SecureBytes(consuming: &bytes) else { return }
            try? cache.store(name, key: key, timeout: 100)
        }
        let description = try cache.description(of: name)
        let matching = try KernelKeyring.contents(of: .userKeyring).filter {
            (try? KernelKeyring.describe($0))?.description == description
        }
        XCTAssertEqual(matching.count, 1)
        let entry = try XCTUnwrap(cache.entries().first { $0.name == name })
        XCTAssertNotNil(entry.secondsLeft)
        XCTAssertNotEqual(try procKeysTimeout(serial(of: name, in: cache)), "perm")
        XCTAssertFalse(try KernelKeyring.contents(of: .processKeyring).contains {
            (try? KernelKeyring.describe($0))?.description == description
        })
    }

    // MARK: eviction and listing

    func test_evict_dropsKey_andLoadReturnsNil() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("evict-me"), timeout: 60)
        XCTAssertTrue(cache.evict(name))
        XCTAssertNil(cache.load(name))
        XCTAssertFalse(cache.evict(name))
    }

    func test_evictAll_removesAllOurKeys_andNothingElse() throws {
        // A uid no account has, so that keys of parallel Keygate runs are left alone.
        let fakeUid = UInt32.random(in: 3_000_000_000...3_900_000_000)
        let ours = cache(uid: fakeUid)
        let neighbour = cache(evicting: "neighbour", uid: fakeUid + 1)
        let names = [uniqueName(), uniqueName(), uniqueName()]
        cleanups.append { ours.evictAll() }
        for (index, name) in names.enumerated() {
            try ours.store(name, key: try secure("k\(index)"), timeout: index == 2 ? 0 : 60)
        }
        try neighbour.store("neighbour", key: try secure("n"), timeout: 60)
        let otherDescription = "other:thing-\(UUID().uuidString.prefix(8))"
        let added = try Subprocess.run(["keyctl", "add", "user", otherDescription, "x", "@u"])
        XCTAssertEqual(added.status, 0, added.err)
        let otherSerial = added.out.trimmingCharacters(in: .whitespacesAndNewlines)
        cleanups.append { [self] in _ = try? Subprocess.run(possessingChild(["keyctl", "invalidate", otherSerial])) }

        XCTAssertEqual(Set(ours.entries().map(\.name)), Set(names))
        XCTAssertEqual(ours.evictAll(), 3)
        XCTAssertEqual(ours.entries(), [])
        for name in names { XCTAssertNil(ours.load(name)) }
        XCTAssertEqual(neighbour.load("neighbour")?.key.unprotectedCopy(), Array("n".utf8))
        let survivor = try Subprocess.run(["keyctl", "search", "@u", "user", otherDescription])
        XCTAssertEqual(survivor.status, 0, survivor.err)
        XCTAssertEqual(survivor.out.trimmingCharacters(in: .whitespacesAndNewlines), otherSerial)
    }

    func test_entries_listNamesAndSecondsLeft_neverKeyBytes() throws {
        let timed = uniqueName(), forever = uniqueName()
        let cache = cache(evicting: timed, forever)
        let marker = "KEYBYTES-\(UUID().uuidString)"
        try cache.store(timed, key: try secure(marker), timeout: 120)
        try cache.store(forever, key: try secure(marker), timeout: 0)
        let entries = cache.entries()
        let timedEntry = try XCTUnwrap(entries.first { $0.name == timed })
        XCTAssertTrue((118...120).contains(timedEntry.secondsLeft ?? 0), "\(timedEntry)")
        XCTAssertEqual(entries.first { $0.name == forever }, CacheEntry(name: forever, secondsLeft: nil))
        XCTAssertFalse(String(describing: entries).contains(marker))
        XCTAssertFalse(String(reflecting: entries).contains(marker))
    }

    // MARK: other processes

    func test_cachedKey_isVisibleToAnotherProcessOfSameUser() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        let marker = "shared-\(UUID().uuidString.prefix(8))"
        try cache.store(name, key: try secure(marker), timeout: 60)
        let description = try cache.description(of: name)
        let found = try Subprocess.run(["keyctl", "search", "@u", "user", description])
        XCTAssertEqual(found.status, 0, found.err)
        let serial = found.out.trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(serial, String(try self.serial(of: name, in: cache).rawValue))
        // Reading it by serial needs possession: the child's session keyring must reach @u.
        let read = try Subprocess.run(possessingChild(["keyctl", "pipe", serial]))
        XCTAssertEqual(read.status, 0, "the child cannot read the key (\(read.err)): its session keyring does not reach @u")
        XCTAssertEqual(Array(read.stdout.dropFirst(KeyCachePayload.headerSize)), Array(marker.utf8))
    }

    func test_cachedKey_isRefusedToAnotherUid() throws {
        try Requirement.require(Requirement.isRoot, "root, to run keyctl as the user nobody")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser"), "runuser (util-linux)")
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("not-for-nobody"), timeout: 60)
        let serial = String(try self.serial(of: name, in: cache).rawValue)
        let read = try Subprocess.run(["runuser", "-u", "nobody", "--", "keyctl", "pipe", serial])
        XCTAssertNotEqual(read.status, 0)
        XCTAssertTrue(read.err.contains("Permission denied"), read.err)
        XCTAssertFalse(read.out.contains("not-for-nobody"))
        let search = try Subprocess.run(["runuser", "-u", "nobody", "--", "keyctl", "search", "@u", "user",
                                         try cache.description(of: name)])
        XCTAssertNotEqual(search.status, 0, "nobody's @u must not hold root's key")
    }

    /// A session keyring that does not reach @u (as after `keyctl session -`) makes
    /// possessor-only keys unreadable by serial; KeyCache must still load its keys.
    func test_load_works_whenSessionKeyringDoesNotReachUserKeyring() throws {
        let name = uniqueName()
        let cache = cache(evicting: name)
        try cache.store(name, key: try secure("detached"), timeout: 60)
        // Undo an earlier fallback in this process, so the fallback is exercised again.
        if let user = try? KernelKeyring.keyringID(.userKeyring, create: false) {
            try? KernelKeyring.unlink(user, from: .processKeyring)
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        // Credentials, hence the session keyring, are per thread: detach only this one.
        let thread = Thread {
            defer { done.signal() }
            guard keyctl_join_session_keyring(nil) >= 0 else {
                outcome.direct = "join failed: errno \(errno)"
                return
            }
            let direct = Result { () throws(KeyringErrno) in
                try KernelKeyring.withPayload(of: KernelKeyring.search(.userKeyring, type: "user",
                                                                         description: "keygate:\(getuid()):\(name)")) { $0.count }
            }
            switch direct {
            case .success: outcome.direct = "readable"
            case .failure(let error): outcome.direct = error.description
            }
            outcome.loaded = cache.load(name)?.key.unprotectedCopy() ?? []
        }
        thread.start()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertTrue(outcome.direct.contains("Permission denied"),
                      "expected a detached session to lose possession: \(outcome.direct)")
        XCTAssertEqual(outcome.loaded, Array("detached".utf8))
    }
}

/// What the detached thread saw; written before the semaphore signals, read after.
private final class Outcome: @unchecked Sendable {
    var direct = ""
    var loaded: [UInt8] = []
}
