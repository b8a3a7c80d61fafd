// Root's records (Gatekeeper/GateRecords.swift) and the wire format (GateRequest, GateMessage),
// as pure values: windows per service and scope, the lockout, a file from another boot, and
// requests that are malformed, oversized or trailing.
import XCTest
@testable import Keygate
@testable import KeygateGateWire
@testable import KeygateGatekeeper
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class GateRecordsTests: XCTestCase {
    func test_anAuthenticationServesOnlyItsServiceAndScope_withinTheWindow() {
        var r = GateRecords(bootID: "b")
        r.recordSuccess(service: "keygate", scope: "tty.1.2.3", now: 100)
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.3", window: 10, now: 110))
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.3", window: 10, now: 111), "the window ended")
        XCTAssertNil(r.freshAuthentication(service: "keygate-strong", scope: "tty.1.2.3", window: 10, now: 101), "another service")
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.4", window: 10, now: 101), "another scope")
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.3", window: 0, now: 100), "window 0: always ask")
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.3", window: 10, now: 99), "a clock before it")
    }

    /// `keygate validate` (sudo -v): only a window still open is extended, only its own service and
    /// scope, and the failure count and lockout stay as they were.
    func test_extend_extendsOnlyAnOpenWindow_ofItsServiceAndScope() {
        var r = GateRecords(bootID: "b")
        r.recordSuccess(service: "keygate", scope: "tty.1.2.3", now: 100)
        r.failures = 2
        XCTAssertFalse(r.extend(service: "keygate", scope: "tty.1.2.4", window: 10, now: 105), "another scope")
        XCTAssertFalse(r.extend(service: "unlock:keygate", scope: "tty.1.2.3", window: 10, now: 105), "another service")
        XCTAssertTrue(r.extend(service: "keygate", scope: "tty.1.2.3", window: 10, now: 108))
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "tty.1.2.3", window: 10, now: 118), "from 108 now")
        XCTAssertEqual(r.failures, 2)
        XCTAssertFalse(r.extend(service: "keygate", scope: "tty.1.2.3", window: 10, now: 119), "an ended window is not reopened")
        XCTAssertFalse(r.extend(service: "keygate", scope: "tty.1.2.3", window: 0, now: 108), "window 0")
        XCTAssertEqual(r.authentications.count, 1)
    }

    /// An extension never moves the authentication's own time: "a password within the last minute"
    /// (certify, fingerUnlockArm) still sees the password's age.
    func test_extend_neverMovesTheAuthenticationsTime() {
        var r = GateRecords(bootID: "b")
        r.recordSuccess(service: "keygate", scope: "tty.1", now: 100)
        XCTAssertTrue(r.recentAuthentication(scope: "tty.1", within: 60, now: 160))
        XCTAssertFalse(r.recentAuthentication(scope: "tty.1", within: 60, now: 166), "66 s after the password")
        XCTAssertTrue(r.extend(service: "keygate", scope: "tty.1", window: 300, now: 166))
        XCTAssertEqual(r.authentications.first?.time, 100, "the password's time stays")
        XCTAssertFalse(r.recentAuthentication(scope: "tty.1", within: 60, now: 166), "validate is not a password")
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "tty.1", window: 300, now: 466), "the window is extended")
        XCTAssertFalse(r.recentAuthentication(scope: "tty.1", within: 60, excluding: ["keygate"], now: 101), "an excluded service")
        XCTAssertEqual(GateRecords.decode(r.encoded(), bootID: "b"), r, "the extension round-trips")
        // A file written without the extension reads with its authentications kept.
        XCTAssertEqual(GateRecords.decode(Array("keygate-records 1\nboot b\nauth keygate tty.1 100\n".utf8), bootID: "b")
            .authentications.first, GateRecords.Authentication(service: "keygate", scope: "tty.1", time: 100))
    }

    /// Each item's own window: a validate extends a window only while that window is open. A
    /// 10-second item whose window closed at 110 stays closed after a validate at 114 that extends
    /// the 300-second default; one that came at 105 extends it, and a chain of such steps holds it.
    func test_extend_neverReopensAShorterWindowThatHadClosed() {
        var r = GateRecords(bootID: "b")
        r.recordSuccess(service: "keygate", scope: "s", now: 100)
        XCTAssertTrue(r.extend(service: "keygate", scope: "s", window: 300, now: 114))
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "s", window: 10, now: 115), "closed at 110: stays closed")
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "s", window: 300, now: 414))
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "s", window: 300, now: 415))
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "s", window: 20, now: 120), "20 s: open at 114, so extended")
        XCTAssertTrue(r.extend(service: "keygate", scope: "s", window: 300, now: 130))
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "s", window: 20, now: 150), "chain 14, 16: each under 20")
        XCTAssertTrue(r.extend(service: "keygate", scope: "s", window: 300, now: 160))
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "s", window: 20, now: 161), "a 30-s step: the 20-s window closed at 150")
        XCTAssertNotNil(r.freshAuthentication(service: "keygate", scope: "s", window: 30, now: 161))

        var s = GateRecords(bootID: "b")
        s.recordSuccess(service: "keygate", scope: "s", now: 100)
        XCTAssertTrue(s.extend(service: "keygate", scope: "s", window: 300, now: 105))
        XCTAssertNotNil(s.freshAuthentication(service: "keygate", scope: "s", window: 10, now: 114), "open at 105: extended to 115")
        XCTAssertNil(s.freshAuthentication(service: "keygate", scope: "s", window: 10, now: 116))
        // A new password starts again with no extension.
        s.recordSuccess(service: "keygate", scope: "s", now: 200)
        XCTAssertEqual(s.authentications, [GateRecords.Authentication(service: "keygate", scope: "s", time: 200)])
    }

    private let lockout = UserLockout(threshold: 5, seconds: 60)

    func test_theFailureAtTheThresholdLocksOut_andTheCountRestarts() {
        var r = GateRecords(bootID: "b")
        for _ in 0..<4 {
            XCTAssertNil(r.beginAttempt(lockout, now: 10))
            XCTAssertNil(r.attemptFailed(lockout, now: 10))
        }
        XCTAssertNil(r.lockoutSecondsLeft(lockout, now: 10))
        XCTAssertNil(r.beginAttempt(lockout, now: 10))
        XCTAssertEqual(r.attemptFailed(lockout, now: 10), 60, "the fifth wrong answer starts it")
        XCTAssertEqual(r.lockoutSecondsLeft(lockout, now: 20), 50)
        XCTAssertEqual(r.beginAttempt(lockout, now: 20), 50, "no attempt during the lockout")
        XCTAssertEqual(r.failures, 0, "the next lockout needs five new failures")
        XCTAssertNil(r.lockoutSecondsLeft(lockout, now: 70))
        r.recordSuccess(service: "s", scope: "x", now: 80)
        XCTAssertEqual(r.lockedUntil, 0)
    }

    /// pam_faillock's preauth: an attempt is counted before PAM sees it, so one whose outcome was never
    /// recorded (the process killed during PAM's delay) costs a try, and five of them lock out.
    func test_anAttemptWhoseOutcomeIsNeverRecorded_isCountedAsAFailure() {
        var r = GateRecords(bootID: "b")
        for _ in 0..<5 { XCTAssertNil(r.beginAttempt(lockout, now: 10)) }   // five guesses, each killed before its result
        XCTAssertEqual(r.failures, 5)
        XCTAssertEqual(r.beginAttempt(lockout, now: 11), 60, "the sixth attempt finds the lockout started")
        XCTAssertEqual(r.lockoutSecondsLeft(lockout, now: 12), 59)
    }

    func test_aCancelBeforeAnyAnswer_givesTheCountBack_andADisabledLockoutNeverStarts() {
        var r = GateRecords(bootID: "b")
        XCTAssertNil(r.beginAttempt(lockout, now: 10))
        r.attemptUnanswered()
        XCTAssertEqual(r.failures, 0)
        r.attemptUnanswered()
        XCTAssertEqual(r.failures, 0, "never below zero")
        let off = UserLockout(threshold: 5, seconds: 0)
        for _ in 0..<20 { XCTAssertNil(r.beginAttempt(off, now: 10)); XCTAssertNil(r.attemptFailed(off, now: 10)) }
        XCTAssertEqual(r.lockedUntil, 0)
    }

    func test_theFileRoundTrips_andAnotherBootsFileIsEmpty() {
        var r = GateRecords(bootID: "boot-1")
        r.recordSuccess(service: "keygate", scope: "ppid.7.99", now: 5)
        _ = r.beginAttempt(lockout, now: 5)
        r.handles.append(GateRecords.Handle(digest: "ab", pid: 3, start: 4, service: "keygate", expires: 9))
        XCTAssertEqual(GateRecords.decode(r.encoded(), bootID: "boot-1"), r)
        XCTAssertEqual(GateRecords.decode(r.encoded(), bootID: "boot-2"), GateRecords(bootID: "boot-2"))
        XCTAssertEqual(GateRecords.decode(Array("garbage".utf8), bootID: "boot-1"), GateRecords(bootID: "boot-1"))
        r.forget(scope: "ppid.7.99")
        XCTAssertTrue(r.authentications.isEmpty)
        r.prune(now: 10)
        XCTAssertTrue(r.handles.isEmpty, "expired handles go")
    }

    static let box = GateRequest.Box(kind: .presence, keyID: [UInt8](repeating: 2, count: 8),
                                     sealed: [UInt8](repeating: 3, count: GatedBlob.boxBytes))
    static let item = GateRequest.Item(.internet(server: "example.org", account: "a", protocol: .https, port: 443), accessControl: 1)
    static let classKey = GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: [UInt8](repeating: 4, count: 32), seal: [])

    /// One request of each operation, with the fields it takes set.
    static let everyCall: [GateRequest.Call] = [
        .keys(item, classKeys: [classKey]),
        .open(item, boxes: [box], .init(reason: "why", fresh: true, context: .init(handle: [UInt8](repeating: 1, count: 32),
                                                                                   issueHandleSeconds: 30))),
        .authenticate(.init(reason: "unlock", classKeys: [classKey], biometric: false, context: .init(issueHandleSeconds: 10))),
        .legacyClassSeed(seed: [UInt8](repeating: 5, count: 32)),
        .presence(item, .init(reason: "r")),
        .forget(all: true),
        .certify(.init(classKeys: [classKey], subjectUID: 1000)),
        .check(item, boxes: [box, box]),
        .status,
        .validate(.init(reason: "v", fresh: true)),
        .fingerprintState,
        .fingerUnlockArm,
        .fingerUnlock(.init(sealedMasterKey: [UInt8](repeating: 6, count: GateRequest.sealedMasterKeyBytes), reason: "finger")),
    ]

    func test_everyOperationRoundTrips_asItsOwnCase() throws {
        XCTAssertEqual(Set(Self.everyCall.map { GateRequest($0).operation }), Set(GateRequest.Operation.allCases), "one of each")
        for call in Self.everyCall {
            for noPrompt in [false, true] {
                let request = GateRequest(call, noPrompt: noPrompt)
                XCTAssertEqual(try GateRequest.decode(request.encoded()), request, "\(call)")
                XCTAssertEqual(request.encoded()[2], request.operation.rawValue, "the operation's number, as before")
            }
        }
    }

    /// The bytes are the version-1 layout: the frame an attacker or an older client writes by hand
    /// (GatekeeperAttackTests writes this one) is the frame the typed request encodes to.
    func test_theBytesAreTheVersionOneLayout() throws {
        // 'Q' v1 certify, flags forUser|noPrompt, no item, no reason, handle, keys, boxes or seed, no seconds; then the uid.
        let frame: [UInt8] = [0x51, 1, 7, 17] + [0, 0, 0, 0] + [0] + [0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0x03, 0xE8]
        let request = GateRequest(.certify(.init(classKeys: [], subjectUID: 1000)), noPrompt: true)
        XCTAssertEqual(try GateRequest.decode(frame), request)
        XCTAssertEqual(request.encoded(), frame)
        // A status request as every client has sent it: noPrompt, nothing else.
        let status: [UInt8] = [0x51, 1, 9, 1] + [0, 0, 0, 0] + [0] + [0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0]
        XCTAssertEqual(try GateRequest.decode(status), GateRequest(.status, noPrompt: true))
    }

    /// Each operation takes its own fields and no other: anything else is refused, so no request
    /// has two encodings and no field means something to an operation that ignores it.
    func test_aFieldTheOperationDoesNotTake_isRefused() throws {
        func layout(_ call: GateRequest.Call, _ change: (inout GateRequestLayout) -> Void) -> [UInt8] {
            var layout = GateRequestLayout(GateRequest(call))
            change(&layout)
            return layout.encoded()
        }
        let refused: [(String, [UInt8])] = [
            ("a box in status", layout(.status) { $0.boxes = [Self.box] }),
            ("a seed in validate", layout(.validate(.init())) { $0.seed = [UInt8](repeating: 1, count: 32) }),
            ("a handle in validate", layout(.validate(.init())) { $0.handle = [UInt8](repeating: 1, count: 32) }),
            ("an item in forget", layout(.forget(all: false)) { $0.identity = .generic(service: "s", account: "a") }),
            ("a uid outside certify", layout(.open(Self.item, boxes: [], .init())) { $0.flags.insert(.forUser); $0.subjectUID = 0 }),
            ("fresh in keys", layout(.keys(Self.item, classKeys: [])) { $0.flags.insert(.fresh) }),
            ("seconds without issueHandle", layout(.presence(Self.item, .init())) { $0.handleSeconds = 30 }),
            ("access control without an item", layout(.status) { $0.accessControl = 1 }),
            ("all in lock's sibling", layout(.status) { $0.flags.insert(.all) }),
            ("a reason in check", layout(.check(Self.item, boxes: [])) { $0.reason = "x" }),
            ("open without an item", layout(.status) { $0.operation = .open }),
            ("a 1.x seed of 5 bytes", layout(.legacyClassSeed(seed: [UInt8](repeating: 1, count: 32))) { $0.seed = [1, 2, 3, 4, 5] }),
            ("a sealed master key of 32 bytes", layout(.fingerUnlock(.init(sealedMasterKey: [UInt8](repeating: 1, count: 80)))) {
                $0.seed = [UInt8](repeating: 1, count: 32) }),
        ]
        for (what, frame) in refused {
            XCTAssertThrowsError(try GateRequest.decode(frame), what) { error in
                XCTAssertTrue(error is GateWireError, "\(what): \(error)")
            }
        }
        let bytes = GateRequest(Self.everyCall[1]).encoded()
        XCTAssertThrowsError(try GateRequest.decode(bytes + [0]), "trailing bytes")
        XCTAssertThrowsError(try GateRequest.decode(Array(bytes.dropLast())), "truncated")
        var badFlags = GateRequest(.status).encoded()
        badFlags[3] = 0x80
        XCTAssertThrowsError(try GateRequest.decode(badFlags), "the unrecorded flag on an operation that takes no presence")
        XCTAssertThrowsError(try GateRequest.decode([]))
    }

    /// An unrecorded presence (keygate-secret-service's) is flag 128 on an open or a presence and
    /// nothing else: every request without it keeps its bytes; one that also carries what would
    /// read or leave a record (fresh, a handle, a wish for one, unlocking keys) is refused; and no
    /// daemon answers it, so PAM or fprintd always runs.
    func test_anUnrecordedPresence_isFlag128_takesNothingThatReadsOrLeavesARecord_andNoDaemonAnswersIt() throws {
        let open = GateRequest(.open(Self.item, boxes: [Self.box], .init(reason: "r", unrecorded: true)))
        let plain = GateRequest(.open(Self.item, boxes: [Self.box], .init(reason: "r")))
        var expected = plain.encoded()
        expected[3] |= 0x80
        XCTAssertEqual(open.encoded(), expected, "the version-1 layout with flag 128, nothing else")
        XCTAssertEqual(try GateRequest.decode(expected), open)
        let presence = GateRequest(.presence(Self.item, .init(reason: "floor", unrecorded: true)))
        XCTAssertEqual(try GateRequest.decode(presence.encoded()), presence)
        XCTAssertFalse(open.daemonAnswers, "no daemon answers it: the helper asks the person")
        XCTAssertFalse(presence.daemonAnswers)
        XCTAssertTrue(plain.daemonAnswers, "the same open without the flag may be the daemon's, as before")
        for call in Self.everyCall {
            XCTAssertEqual(GateRequest(call).encoded()[3] & 0x80, 0, "no existing request sets it: \(call)")
        }
        func layout(_ request: GateRequest, _ change: (inout GateRequestLayout) -> Void) -> [UInt8] {
            var layout = GateRequestLayout(request)
            change(&layout)
            return layout.encoded()
        }
        let refused: [(String, [UInt8])] = [
            ("with fresh", layout(open) { $0.flags.insert(.fresh) }),
            ("with a handle", layout(open) { $0.handle = [UInt8](repeating: 1, count: 32) }),
            ("with a wish for a handle", layout(open) { $0.flags.insert(.issueHandle); $0.handleSeconds = 30 }),
            ("with unlocking keys", layout(open) { $0.flags.insert(.unlocking); $0.classKeys = [Self.classKey] }),
            ("with the unlocking flag alone", layout(presence) { $0.flags.insert(.unlocking) }),
            ("on validate", layout(GateRequest(.validate(.init()))) { $0.flags.insert(.unrecorded) }),
            ("on authenticate", layout(GateRequest(.authenticate(.init()))) { $0.flags.insert(.unrecorded) }),
            ("on keys", layout(GateRequest(.keys(Self.item, classKeys: []))) { $0.flags.insert(.unrecorded) }),
            ("on check", layout(GateRequest(.check(Self.item, boxes: []))) { $0.flags.insert(.unrecorded) }),
        ]
        for (what, bytes) in refused {
            XCTAssertThrowsError(try GateRequest.decode(bytes), what) { error in
                XCTAssertTrue(error is GateWireError, "\(what): \(error)")
            }
        }
    }

    /// The success of an unrecorded presence clears the failures and the lockout, as any success,
    /// and leaves no authentication that a window could be read from.
    func test_clearFailures_endsTheLockout_andRecordsNoAuthentication() {
        var r = GateRecords(bootID: "b")
        let lockout = UserLockout(threshold: 2, seconds: 60)
        XCTAssertNil(r.beginAttempt(lockout, now: 100))
        _ = r.attemptFailed(lockout, now: 100)
        XCTAssertEqual(r.failures, 1)
        r.clearFailures()
        XCTAssertEqual(r.failures, 0)
        XCTAssertTrue(r.authentications.isEmpty, "nothing a later request could reuse")
        XCTAssertNil(r.freshAuthentication(service: "keygate", scope: "global", window: 300, now: 101))
    }

    func test_textCutAtTheCap_endsOnACharacter_andStillDecodes() throws {
        let reason = String(repeating: "a", count: GateRequest.maxReasonBytes - 1) + "é"
        let request = GateRequest(.validate(.init(reason: reason)))
        guard case .validate(let decoded) = try GateRequest.decode(request.encoded()).call else { return XCTFail("not a validate") }
        XCTAssertEqual(decoded.reason, String(repeating: "a", count: GateRequest.maxReasonBytes - 1))
        let notice = String(repeating: "a", count: GateMessage.maxTextBytes - 1) + "é"
        guard case .notice(let text) = try GateMessage.decode(GateMessage.notice(notice).encoded(), answering: .status) else {
            return XCTFail("not a notice")
        }
        XCTAssertEqual(text.utf8.count, GateMessage.maxTextBytes - 1)
        XCTAssertEqual(GateWire.prefix("héllo", maxBytes: 2), "h", "never half a character")
    }

    /// One answer of each operation, with the fields it returns set.
    static let everyAnswer: [GateAnswer] = [
        .keys([.init(kind: .presence, key: [UInt8](repeating: 9, count: 32))]),
        .open(shares: [.init(index: 0, share: [UInt8](repeating: 5, count: 32))], handle: [UInt8](repeating: 1, count: 32)),
        .authenticate(seals: [.init(accessibility: .whenUnlocked, seal: [UInt8](repeating: 7, count: 32))], handle: []),
        .legacyClassSeed(seed: [UInt8](repeating: 3, count: 32)),
        .presence(handle: []),
        .forget,
        .certify(seals: [.init(accessibility: .afterFirstUnlock, seal: [UInt8](repeating: 8, count: 32))]),
        .check(invalid: [1]),
        .status(lockoutSecondsLeft: 42, failedAttempts: 3),
        .validate(),
        .fingerprintState(domainState: [UInt8](repeating: 7, count: 32), biometryLockedOut: true),
        .fingerUnlockArm(publicKey: [UInt8](repeating: 2, count: 32)),
        .fingerUnlock(masterKey: [UInt8](repeating: 4, count: 32)),
    ]

    func test_messagesRoundTrip_eachAnswerAsItsOperationReadsIt() throws {
        XCTAssertEqual(Set(Self.everyAnswer.map(\.operation)), Set(GateRequest.Operation.allCases), "one of each")
        for answer in Self.everyAnswer {
            for message in [GateMessage.result(.answer(answer)), .result(.failure(KeychainError(.authFailed, "no")))] {
                XCTAssertEqual(try GateMessage.decode(message.encoded(), answering: answer.operation), message, "\(answer)")
            }
        }
        for message in [GateMessage.promptSecret("Password: "), .notice("Sorry, try again."),
                        .audit(event: "auth-success", service: "keygate", detail: "")] {
            XCTAssertEqual(try GateMessage.decode(message.encoded(), answering: .open), message)
        }
        XCTAssertThrowsError(try GateMessage.decode([UInt8(ascii: "Z")], answering: .open))
        // An answer read for an operation that does not return its fields is refused.
        let shares = GateMessage.result(.answer(Self.everyAnswer[1])).encoded()
        XCTAssertThrowsError(try GateMessage.decode(shares, answering: .status), "shares answer no status")
        let failureWithShares = shares.enumerated().map { $0.offset == 4 ? UInt8(7) : $0.element }
        XCTAssertThrowsError(try GateMessage.decode(failureWithShares, answering: .open), "a failure carries no share")
    }

    /// `unlocking` is flag 64 with the class keys to seal in the class-key field: the frame the
    /// client sent before the requests were typed (written here by hand, field by field) is the
    /// frame the typed request encodes to, for each operation that takes it.
    func test_unlocking_isFlag64AndTheClassKeyField_theBytesTheClientSent() throws {
        let keys = [Self.classKey, GateRequest.ClassKey(accessibility: .afterFirstUnlock, publicKey: [UInt8](repeating: 5, count: 32), seal: [])]
        func frame(_ operation: UInt8, flags: UInt8, item: GateRequest.Item? = nil, reason: String) -> [UInt8] {
            var w = ByteWriter()
            w.u8(UInt8(ascii: "Q")); w.u8(1); w.u8(operation); w.u8(flags); w.u32(item?.accessControl ?? 0)
            if let item { w.u8(1); GateIdentityCodec.write(item.identity, to: &w) } else { w.u8(0) }
            w.string(reason); w.tiny([])
            w.u8(UInt8(keys.count))
            for key in keys { w.u8(key.accessibility.blobCode); w.raw(key.publicKey); w.tiny(key.seal) }
            w.u8(0); w.tiny([]); w.u32(0)
            return w.bytes
        }
        let cases: [(GateRequest.Call, [UInt8])] = [
            (.validate(.init(reason: "v", fresh: true, unlocking: keys)), frame(10, flags: 64 | 2, reason: "v")),
            (.presence(Self.item, .init(reason: "p", fresh: true, unlocking: keys)), frame(5, flags: 64 | 2, item: Self.item, reason: "p")),
            (.open(Self.item, boxes: [], .init(reason: "o", fresh: true, unlocking: keys)), frame(2, flags: 64 | 2, item: Self.item, reason: "o")),
            (.authenticate(.init(reason: "a", classKeys: keys, unlocking: true)), frame(3, flags: 64, reason: "a")),
        ]
        for (call, bytes) in cases {
            XCTAssertEqual(GateRequest(call).encoded(), bytes, "\(call)")
            XCTAssertEqual(try GateRequest.decode(bytes), GateRequest(call), "\(call)")
            XCTAssertEqual(GateRequest(call).unlocking, keys)
            XCTAssertFalse(GateRequest(call).daemonAnswers, "an unlock settles in the helper's run, never the daemon's")
        }
        // Without the flag, an open, presence or validate takes no class key; the flag means nothing to keys, certify or status.
        func layout(_ call: GateRequest.Call, _ change: (inout GateRequestLayout) -> Void) -> [UInt8] {
            var layout = GateRequestLayout(GateRequest(call))
            change(&layout)
            return layout.encoded()
        }
        let refused: [(String, [UInt8])] = [
            ("class keys in a validate without the flag", layout(.validate(.init(fresh: true))) { $0.classKeys = keys }),
            ("class keys in an open without the flag", layout(.open(Self.item, boxes: [], .init())) { $0.classKeys = keys }),
            ("the flag on keys", layout(.keys(Self.item, classKeys: keys)) { $0.flags.insert(.unlocking) }),
            ("the flag on certify", layout(.certify(.init(classKeys: keys))) { $0.flags.insert(.unlocking) }),
            ("the flag on status", layout(.status) { $0.flags.insert(.unlocking) }),
        ]
        for (what, bytes) in refused {
            XCTAssertThrowsError(try GateRequest.decode(bytes), what) { XCTAssertTrue($0 is GateWireError, "\(what): \($0)") }
        }
        // A window's validate with the flag is still a validate the daemon never answers, and with no key an unlock of no class.
        XCTAssertEqual(try GateRequest.decode(layout(.validate(.init())) { $0.flags.insert(.unlocking) }),
                       GateRequest(.validate(.init(unlocking: []))))
    }

    /// What an `unlocking` run settled travels in the result's seals and seed fields, typed in the
    /// answer of the operation asked; any other operation's answer refuses them.
    func test_whatAnUnlockingRunSettled_isTypedInTheAnswer_andRefusedElsewhere() throws {
        let settled = GateAnswer.Settled(seals: [.init(accessibility: .whenUnlocked, seal: [UInt8](repeating: 7, count: 32))],
                                         fingerUnlockKey: [UInt8](repeating: 9, count: 32))
        let answers: [GateAnswer] = [.open(shares: [], handle: [], settled: settled), .presence(handle: [], settled: settled),
                                     .validate(settled: settled),
                                     .authenticate(seals: settled.seals, handle: [], fingerUnlockKey: settled.fingerUnlockKey)]
        let frame = GateMessage.result(.answer(answers[0])).encoded()
        for answer in answers {
            XCTAssertEqual(answer.settled, settled, "\(answer)")
            let bytes = GateMessage.result(.answer(answer)).encoded()
            XCTAssertEqual(bytes, frame, "one layout: the seals, then the seed")
            XCTAssertEqual(try GateMessage.decode(bytes, answering: answer.operation), .result(.answer(answer)))
        }
        for other in [GateRequest.Operation.keys, .certify, .check, .status, .forget] {
            XCTAssertThrowsError(try GateMessage.decode(frame, answering: other), "\(other)")
        }
        XCTAssertEqual(GateAnswer.validate().settled, .nothing)
        XCTAssertEqual(GateMessage.result(.answer(.validate())).encoded(), GateMessage.result(.answer(.forget)).encoded(),
                       "nothing settled: the empty answer, byte for byte")
    }

    /// A fuzzer's finding: a lockout flag of 0xb0 read as true and written back as 1. The flag is one
    /// byte, 0 or 1; anything else is refused, whatever operation is asked.
    func test_aBiometricLockoutFlagOtherThan0Or1_isRefused() {
        let found: [UInt8] = [0x52, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0xb0, 0, 0, 0x04, 0, 0, 0x01, 0, 0xb0]
        for operation in GateRequest.Operation.allCases {
            XCTAssertThrowsError(try GateMessage.decode(found, answering: operation), "\(operation)")
        }
        var state = GateMessage.result(.answer(.fingerprintState(domainState: [], biometryLockedOut: true))).encoded()
        XCTAssertNoThrow(try GateMessage.decode(state, answering: .fingerprintState))
        state[state.count - 1] = 0xb0
        XCTAssertThrowsError(try GateMessage.decode(state, answering: .fingerprintState)) { error in
            XCTAssertEqual("\(error)".contains("neither 0 nor 1"), true, "\(error)")
        }
    }

    /// A program built with an older Keygate library talks to the installed gatekeeper: an empty
    /// answer is byte for byte what gatekeepers sent before the answers were typed (this frame is
    /// the empty result as gatekeepers have always encoded it), and a status answer round-trips.
    func test_anEmptyAnswer_isTheOldFrame_andAStatusAnswerRoundTrips() throws {
        let old: [UInt8] = [UInt8(ascii: "R"), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
        for answer in [GateAnswer.validate(), .forget, .presence(handle: []), .status(lockoutSecondsLeft: 0, failedAttempts: 0),
                       .fingerprintState(domainState: [], biometryLockedOut: false)] {
            XCTAssertEqual(GateMessage.result(.answer(answer)).encoded(), old, "\(answer)")
            XCTAssertEqual(try GateMessage.decode(old, answering: answer.operation), .result(.answer(answer)))
        }
        let status = GateMessage.result(.answer(.status(lockoutSecondsLeft: 42, failedAttempts: 3)))
        XCTAssertEqual(status.encoded().count, 13 + 8, "a status result: the lockout pair and nothing more")
        let state = GateMessage.result(.answer(.fingerprintState(domainState: [UInt8](repeating: 7, count: 32), biometryLockedOut: true)))
        XCTAssertEqual(state.encoded().count, 13 + 8 + 1 + 32 + 1)
        // Written another way (a lockout pair of zeros with nothing after it) is not the one encoding.
        XCTAssertThrowsError(try GateMessage.decode(old + [0, 0, 0, 0, 0, 0, 0, 0], answering: .status))
    }

    /// Apple's biometryLockout: a finger's attempts are counted before the scan, apart from the
    /// password's; five failed matches lock fingers out until a password succeeds; the file keeps it.
    func test_fiveFailedMatches_lockBiometryOut_untilAPassword_andNeverTouchThePasswordsCounter() {
        var r = GateRecords(bootID: "b")
        for _ in 0..<4 {
            XCTAssertNil(r.beginFingerAttempt(lockout, now: 10))
            XCTAssertFalse(r.fingerFailed())
        }
        XCTAssertNil(r.beginFingerAttempt(lockout, now: 10))
        r.fingerUnanswered()
        XCTAssertEqual(r.biometryFailures, 4, "a scan that never came gives its count back")
        XCTAssertNil(r.beginFingerAttempt(lockout, now: 10))
        XCTAssertTrue(r.fingerFailed(), "the fifth failed match starts it")
        XCTAssertEqual(r.failures, 0, "the password's counter is untouched")
        XCTAssertNil(r.beginAttempt(lockout, now: 11), "the password is still tried")
        XCTAssertEqual(r.beginFingerAttempt(lockout, now: 11), .biometryLocked)
        let saved = GateRecords.decode(r.encoded(), bootID: "b")
        XCTAssertTrue(saved.biometryLocked)
        XCTAssertFalse(GateRecords.decode(r.encoded(), bootID: "another boot").biometryLocked, "a reboot drops it")
        var damaged = Array(String(decoding: r.encoded(), as: UTF8.self).replacingOccurrences(of: "biometry 0 1", with: "biometry 0 x").utf8)
        XCTAssertTrue(GateRecords.decode(damaged, bootID: "b").biometryLocked, "a damaged flag does not end it")
        damaged.removeAll()
        r.credentialSucceeded(password: false)
        XCTAssertTrue(r.biometryLocked, "only a password ends it")
        r.credentialSucceeded(password: true)
        XCTAssertFalse(r.biometryLocked)
        XCTAssertEqual(r.beginFingerAttempt(UserLockout(threshold: 5, seconds: 60), now: 12), nil)
        r.lockedUntil = 100
        XCTAssertEqual(r.beginFingerAttempt(lockout, now: 50), .lockedOut(50), "the user's lockout refuses fingers too")
        XCTAssertFalse(String(decoding: GateRecords(bootID: "b").encoded(), as: UTF8.self).contains("biometry"),
                       "no line while there is nothing to keep: the file is what it was")
    }

    /// NSpid's last value: the pid a process has in its own namespace (1 for a container's init).
    func test_namespacePID_isTheLastValueOfNSpid() {
        XCTAssertEqual(ProcStatus.namespacePID(statusText: Array("Name:\tbash\nNSpid:\t4242\t1\nNSsid:\t1\n".utf8)[...]), 1)
        XCTAssertEqual(ProcStatus.namespacePID(statusText: Array("Name:\tx\nNSpid:\t77\n".utf8)[...]), 77)
        XCTAssertNil(ProcStatus.namespacePID(statusText: Array("Name:\tx\n".utf8)[...]))
        XCTAssertEqual(ProcStatus.namespacePID(of: getpid()).map { $0 > 0 }, true)
    }

    func test_procStat_countsFieldsAfterTheLastParenthesis() {
        let line = "1234 (a (b) c) S 77 1234 1234 34816 1234 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 0 0"
        XCTAssertEqual(ProcStat.parse(line), ProcStat(parent: 77, session: 1234, ttyNumber: 34816, startTime: 987654))
        XCTAssertNil(ProcStat.parse("garbage"))
    }
}
