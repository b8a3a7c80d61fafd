// What the gatekeeper's daemon keeps between requests (GateRecordsCache, the presence pairs of
// GateSecrets.DerivedPairs) and what a recorded success drops (the authentications of ended
// scopes), against real files in a private gate folder and real processes in /proc: a kept
// copy stands for its file only while the file is unchanged, and a kept key is the key.
import Foundation
import XCTest
@testable import KeygateGateWire
@testable import KeygateGatekeeper
@testable import KeygateCore

final class GateDaemonCacheTests: XCTestCase {
    override func setUpWithError() throws {
        try makeGateFolder(self)
        GateRecordsCache.enable()
    }

    func test_keptRecords_standForTheFile_onlyWhileItIsUnchanged() throws {
        let uid: UInt32 = 4_000_001
        let path = GatekeeperPaths.recordPath(uid: uid, .process())
        let recorded = { try GateRecords.update(uid: uid, environment: .process()) { $0.authentications.count } }
        try GateRecords.update(uid: uid, environment: .process()) { $0.recordSuccess(service: "keygate", scope: "global", now: GateRecords.now) }
        XCTAssertNotNil(GateRecordsCache.lookup(uid: uid, try XCTUnwrap(FileVersion(path: path))), "the daemon keeps what it wrote")
        XCTAssertEqual(try recorded(), 1)

        // The file removed (root cleaning /run): the copy does not outlive it.
        XCTAssertEqual(unlink(path), 0)
        XCTAssertEqual(try recorded(), 0, "no file, no authentication")

        // Another writer (the setuid helper: `keygate lock`, a lockout, a new authentication)
        // replaces the file: the next request reads what it wrote.
        try GateRecords.update(uid: uid, environment: .process()) { $0.recordSuccess(service: "keygate", scope: "global", now: GateRecords.now) }
        XCTAssertEqual(try recorded(), 1)
        try AtomicFile.write(GateRecords(bootID: GateRecords.currentBootID).encoded(), to: path, mode: 0o600)
        XCTAssertNil(GateRecordsCache.lookup(uid: uid, try XCTUnwrap(FileVersion(path: path))), "a replaced file is a new version")
        XCTAssertEqual(try recorded(), 0, "the helper's `keygate lock` counts at the daemon's next request")
    }

    func test_endedScopes_areDropped_liveAndUnreadableOnesKept() throws {
        let me = try XCTUnwrap(ProcStat.read(pid: getpid()))
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/bin/true")
        try child.run()
        child.waitUntilExit()
        let gone = child.processIdentifier
        let live = ["ppid.\(getpid()).\(me.startTime)", "session.\(getpid()).\(me.startTime)",
                    "tty.34816.\(getpid()).\(me.startTime)", "global", "another.kind.of.id"]
        let ended = ["ppid.\(getpid()).\(me.startTime + 1)", "ppid.\(gone).\(me.startTime)", "tty.34816.\(gone).5",
                     "session.\(getpid()).\(me.startTime + 7)"]
        var records = GateRecords(bootID: "b")
        for scope in ended + live { records.authentications.append(.init(service: "keygate", scope: scope, time: 1)) }
        records.dropEndedScopes(isLive: CallerScope.isLive)
        XCTAssertEqual(records.authentications.map(\.scope), live,
                       "a scope whose process ended, or whose pid names a process started at another time, is gone")
    }

    func test_keptPresencePairs_areTheDerivedKeys_perItem() throws {
        let name = String(cString: getpwuid(getuid()).pointee.pw_name)
        let plain = try GateSecrets.load(uid: getuid(), userName: name, environment: .process())
        var keeping = try GateSecrets.load(uid: getuid(), userName: name, environment: .process())
        keeping.keepDerivedPairs()
        let item = ItemIdentity.generic(service: "bank", account: "me")
        let other = ItemIdentity.generic(service: "bank", account: "you")
        let expected = try plain.presencePair(generation: plain.generation, flags: 1, identity: item)
        for _ in 0..<2 {
            let kept = try keeping.presencePair(generation: keeping.generation, flags: 1, identity: item)
            XCTAssertEqual(kept.publicKey, expected.publicKey)
            XCTAssertEqual(kept.privateKey.unprotectedCopy(), expected.privateKey.unprotectedCopy())
        }
        XCTAssertEqual(try keeping.presencePair(keyID: expected.keyID, flags: 1, identity: item)?.publicKey, expected.publicKey)
        XCTAssertNotEqual(try keeping.presencePair(generation: keeping.generation, flags: 1, identity: other).publicKey,
                          expected.publicKey, "another item has its own key, kept or not")
        XCTAssertNotEqual(try keeping.presencePair(generation: keeping.generation, flags: 3, identity: item).publicKey,
                          expected.publicKey, "other flags, another key")
        XCTAssertNil(try keeping.presencePair(keyID: expected.keyID, flags: 1, identity: other),
                     "a box of one item names no key of another")
    }

    func test_keptShares_areTheOpenedShares_andOutliveTheWipedReply() throws {
        let name = String(cString: getpwuid(getuid()).pointee.pw_name)
        var keeping = try GateSecrets.load(uid: getuid(), userName: name, environment: .process())
        keeping.keepDerivedPairs()
        let pair = try keeping.presencePair(generation: keeping.generation, flags: 1, identity: .generic(service: "bank", account: "me"))
        let otherPair = try keeping.presencePair(generation: keeping.generation, flags: 1, identity: .generic(service: "bank", account: "you"))
        let content = [UInt8](repeating: 7, count: GatedBlob.contentKeyBytes)
        let box = try SealedBox.seal(secureBytes(String(decoding: content, as: UTF8.self)), to: pair.publicKey)
        var reply = try XCTUnwrap(keeping.share(in: box, openedWith: pair))
        XCTAssertEqual(reply, content)
        Sodium.wipe(&reply)   // as the daemon wipes each reply once sent
        XCTAssertEqual(keeping.share(in: box, openedWith: pair), content, "the kept share is not the reply that was wiped")
        XCTAssertNil(keeping.share(in: box, openedWith: otherPair), "a kept share answers for its own pair only")
        var damaged = box
        damaged[damaged.count - 1] ^= 1
        XCTAssertNil(keeping.share(in: damaged, openedWith: pair), "another box's bytes are opened, not looked up")
    }
}
