// Fuzz harness for keygate-gatekeeper's wire decoders (Sources/KeygateGateWire): the
// first byte picks the decoder, the rest is one frame. Even: GateRequest.decode, what the
// setuid-root gatekeeper reads from any user; odd: GateMessage.decode, what the client
// reads back (prompts, notices, the result), as the answer to the operation the rest of
// the byte names. Invariants: nothing traps; a refusal is GateWireError.malformed with a
// message; decoding is deterministic (the same request or the same refusal twice); an
// accepted frame re-encodes (`encoded()`) to exactly its bytes, so the wire format is
// canonical and no two frames mean the same thing; an accepted request is the case of the
// operation its frame names and keeps the limits the gatekeeper relies on (handle, seal,
// seed and sealed-key sizes, at most 17 boxes, none of the class kind); an accepted answer
// answers the operation asked.
// KEYGATE_FUZZ_MAKE_SEEDS=DIR writes the seed corpus (Fuzz/README.md). Delegates
// everything to the library.
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateGateWire
@testable import KeygateStorage
import Glibc

enum GateFuzz {
    enum Outcome<T: Equatable>: Equatable {
        case accepted(T)
        case refused(String)
    }

    /// Runs a decoder; a thrown error must be GateWireError.malformed with a message.
    static func decode<T: Equatable>(_ what: String, _ body: () throws -> T) -> Outcome<T> {
        do {
            return .accepted(try body())
        } catch let error as GateWireError {
            switch error {
            case .malformed(let message):
                require(!message.isEmpty, "\(what) refused without a message")
                return .refused(message)
            }
        } catch {
            require(false, "\(what) threw something other than GateWireError: \(error)")
            return .refused("")
        }
    }

    static func request(_ frame: [UInt8]) {
        let first = decode("GateRequest.decode") { try GateRequest.decode(frame) }
        let second = decode("GateRequest.decode") { try GateRequest.decode(frame) }
        require(first == second, "GateRequest.decode is not deterministic")
        guard case .accepted(let request) = first else {
            FuzzStats.record(refused: true)
            return
        }
        FuzzStats.record(refused: false)
        let again = request.encoded()
        require(again == frame, "an accepted request re-encodes to other bytes (\(again.count) against \(frame.count)): decode is not canonical")
        require(decode("GateRequest.decode of encoded()") { try GateRequest.decode(again) } == .accepted(request),
                "an accepted request does not decode to itself after encoded()")
        require(frame.count > 2 && frame[2] == request.operation.rawValue, "the case is not the operation the frame names")
        func check(_ context: GateRequest.Context) {
            require(context.handle.isEmpty || context.handle.count == GateRequest.handleBytes, "a handle of \(context.handle.count) bytes")
        }
        func check(_ reason: String) {
            require(reason.utf8.count <= GateRequest.maxReasonBytes, "a reason of \(reason.utf8.count) bytes")
        }
        func check(_ boxes: [GateRequest.Box]) {
            require(boxes.count <= GatedBlob.maxGates + 1, "\(boxes.count) boxes")
            for box in boxes {
                require(box.kind != .accessClass, "a box of the class kind")
                require(box.keyID.count == BoxKeyPair.keyIDBytes && box.sealed.count == GatedBlob.boxBytes, "a box of the wrong size")
            }
        }
        func check(_ keys: [GateRequest.ClassKey]) {
            for key in keys {
                require(key.publicKey.count == BoxKeyPair.publicKeyBytes, "a class key of \(key.publicKey.count) bytes")
                require(key.seal.isEmpty || key.seal.count == GateRequest.sealBytes, "a seal of \(key.seal.count) bytes")
            }
        }
        switch request.call {
        case .keys(_, let keys): check(keys)
        case .open(_, let boxes, let presence):
            check(boxes)
            check(presence.reason)
            check(presence.context)
            check(presence.unlocking ?? [])
            checkUnrecorded(presence)
        case .presence(_, let presence):
            check(presence.reason)
            check(presence.context)
            check(presence.unlocking ?? [])
            checkUnrecorded(presence)
        case .check(_, let boxes): check(boxes)
        case .authenticate(let authentication):
            check(authentication.classKeys)
            check(authentication.reason)
            check(authentication.context)
        case .certify(let certification):
            check(certification.classKeys)
            check(certification.reason)
        case .legacyClassSeed(let seed): require(seed.count == BoxKeyPair.seedBytes, "a 1.x seed of \(seed.count) bytes")
        case .fingerUnlock(let unlock):
            require(unlock.sealedMasterKey.count == GateRequest.sealedMasterKeyBytes, "a sealed master key of \(unlock.sealedMasterKey.count) bytes")
            check(unlock.reason)
        case .validate(let validation):
            check(validation.reason)
            check(validation.unlocking ?? [])
        case .forget, .status, .fingerprintState, .fingerUnlockArm: break
        }
    }

    /// An unrecorded presence reads and leaves no record: it carries no fresh flag, no handle, no
    /// wish for one and no unlocking keys, and no daemon answers it (only the helper can ask).
    static func checkUnrecorded(_ presence: GateRequest.Presence) {
        guard presence.unrecorded else { return }
        require(!presence.fresh && presence.context.handle.isEmpty && presence.context.issueHandleSeconds == nil
                && presence.unlocking == nil, "an accepted unrecorded presence carries what would read or leave a record")
    }

    /// The operation a message selector names: the client reads a result for the request it sent.
    static func operation(_ selector: UInt8) -> GateRequest.Operation {
        let all = GateRequest.Operation.allCases
        return all[Int(selector >> 1) % all.count]
    }

    static func message(_ frame: [UInt8], answering operation: GateRequest.Operation) {
        let first = decode("GateMessage.decode") { try GateMessage.decode(frame, answering: operation) }
        let second = decode("GateMessage.decode") { try GateMessage.decode(frame, answering: operation) }
        require(first == second, "GateMessage.decode is not deterministic")
        guard case .accepted(let message) = first else {
            FuzzStats.record(refused: true)
            return
        }
        FuzzStats.record(refused: false)
        let again = message.encoded()
        require(again == frame, "an accepted message re-encodes to other bytes (\(again.count) against \(frame.count)): decode is not canonical")
        require(decode("GateMessage.decode of encoded()") { try GateMessage.decode(again, answering: operation) } == .accepted(message),
                "an accepted message does not decode to itself after encoded()")
        switch message {
        case .promptSecret(let text), .promptVisible(let text), .notice(let text):
            require(text.utf8.count <= GateMessage.maxTextBytes, "a prompt of \(text.utf8.count) bytes")
        case .audit(let event, let service, let detail):
            require([event, service, detail].allSatisfy { $0.utf8.count <= GateMessage.maxTextBytes }, "an audit field over the cap")
        case .result(.failure(let code, let text)):
            require(text.utf8.count <= GateMessage.maxTextBytes, "a result message of \(text.utf8.count) bytes")
            require(code.status != 0, "an error with status 0")
        case .result(.answer(let answer)):
            require(answer.operation == operation, "an answer of another operation than the one asked")
            switch answer {
            case .keys(let keys): require(keys.allSatisfy { $0.key.count == BoxKeyPair.publicKeyBytes }, "a public key of the wrong size")
            case .authenticate(let seals, _, _), .certify(let seals):
                require(seals.allSatisfy { $0.seal.count == GateRequest.sealBytes }, "a seal of the wrong size")
            case .open(_, _, let settled), .presence(_, let settled), .validate(let settled):
                require(settled.seals.allSatisfy { $0.seal.count == GateRequest.sealBytes }, "a settled seal of the wrong size")
            default: break
            }
        }
    }

    // MARK: Seeds

    static func filled(_ count: Int, _ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: count) }

    static let generic = ItemIdentity.generic(service: "fuzz-service", account: "alice")
    static let internet = ItemIdentity.internet(server: "example.org", account: "bob", protocol: .https, port: 443,
                                                path: "/login", securityDomain: "realm", authenticationType: .htmlForm)

    static func box(_ kind: GateKind, _ byte: UInt8) -> GateRequest.Box {
        GateRequest.Box(kind: kind, keyID: filled(BoxKeyPair.keyIDBytes, byte), sealed: filled(GatedBlob.boxBytes, byte &+ 1))
    }

    static func classKey(_ byte: UInt8, sealed: Bool = false) -> GateRequest.ClassKey {
        GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: filled(BoxKeyPair.publicKeyBytes, byte),
                             seal: sealed ? filled(GateRequest.sealBytes, byte &+ 1) : [])
    }

    /// A public key for every class, as keys.json records them (an unlock's keys to seal).
    static let everyClassKey: [GateRequest.ClassKey] = Accessibility.allCases.enumerated().map { index, a in
        GateRequest.ClassKey(accessibility: a, publicKey: filled(32, UInt8(0x58 + index)), seal: [])
    }

    /// A seed per operation (each case with the fields it takes), then malformed ones, then one
    /// result per operation and the other messages.
    static func seeds() -> [(String, [UInt8])] {
        let genericItem = GateRequest.Item(generic, accessControl: 1 << 14 | 1)
        let internetItem = GateRequest.Item(internet, accessControl: 1 << 15 | 1 << 4 | 1 << 3)
        let context = GateRequest.Context(handle: filled(GateRequest.handleBytes, 0x40), issueHandleSeconds: nil)
        let requests: [(String, GateRequest)] = [
            ("request-keys-generic", GateRequest(.keys(genericItem, classKeys: [classKey(0x21, sealed: true)]))),
            ("request-keys-internet", GateRequest(.keys(internetItem, classKeys: []))),
            ("request-open-presence", GateRequest(.open(genericItem, boxes: [box(.presence, 0x30)], .init(reason: "read the VPN password")),
                                                  noPrompt: true)),
            ("request-open-three-boxes", GateRequest(.open(internetItem, boxes: [box(.presence, 0x41), box(.currentSet, 0x42), box(.device, 0x43)],
                                                           .init(reason: "ouvrir l’élément", fresh: true,
                                                                 context: .init(handle: context.handle, issueHandleSeconds: 30))))),
            ("request-authenticate", GateRequest(.authenticate(.init(reason: "unlock the keychain", classKeys:
                Accessibility.allCases.enumerated().map { index, a in
                    GateRequest.ClassKey(accessibility: a, publicKey: filled(32, UInt8(0x50 + index)), seal: [])
                })))),
            ("request-authenticate-biometric", GateRequest(.authenticate(.init(reason: "LAContext", biometric: true,
                                                                               context: .init(issueHandleSeconds: 10))))),
            ("request-legacy-seed", GateRequest(.legacyClassSeed(seed: filled(BoxKeyPair.seedBytes, 0x60)))),
            ("request-presence", GateRequest(.presence(genericItem, .init(reason: "why", fresh: true, context: context)))),
            ("request-forget", GateRequest(.forget(all: false))),
            ("request-forget-all", GateRequest(.forget(all: true))),
            ("request-certify", GateRequest(.certify(.init(classKeys: [classKey(7)])))),
            ("request-certify-for-user", GateRequest(.certify(.init(classKeys: [classKey(7)], subjectUID: 1000)), noPrompt: true)),
            ("request-check", GateRequest(.check(genericItem, boxes: [box(.currentSet, 5), box(.device, 6)]))),
            ("request-status", GateRequest(.status, noPrompt: true)),
            ("request-validate", GateRequest(.validate(.init(reason: "validate", fresh: true)))),
            ("request-fingerprint-state", GateRequest(.fingerprintState, noPrompt: true)),
            ("request-finger-unlock-arm", GateRequest(.fingerUnlockArm, noPrompt: true)),
            ("request-finger-unlock", GateRequest(.fingerUnlock(.init(sealedMasterKey: filled(GateRequest.sealedMasterKeyBytes, 9),
                                                                     reason: "unlock")))),
            // `unlocking` (flag 64): the class keys to seal in the class-key field of an open, presence or validate.
            // The frame the client sent before the requests were typed: flag 64 with no class key yet.
            ("request-open-unlocking", GateRequest(.open(.init(generic, accessControl: 1), boxes: [box(.presence, 0x30)],
                                                         .init(reason: "read the VPN password", fresh: true, unlocking: [])),
                                                   noPrompt: true)),
            ("request-open-unlocking-keys", GateRequest(.open(genericItem, boxes: [box(.presence, 0x30)],
                                                              .init(reason: "read", fresh: true, unlocking: everyClassKey)))),
            ("request-presence-unlocking", GateRequest(.presence(genericItem, .init(reason: "why", fresh: true, unlocking: everyClassKey)))),
            ("request-validate-unlocking", GateRequest(.validate(.init(reason: "validate", fresh: true, unlocking: everyClassKey)))),
            ("request-authenticate-unlocking", GateRequest(.authenticate(.init(reason: "unlock", classKeys: everyClassKey,
                                                                               unlocking: true)))),
            // `unrecorded` (flag 128): keygate-secret-service's fresh presence that reads and leaves no record.
            ("request-open-unrecorded", GateRequest(.open(genericItem, boxes: [box(.presence, 0x31)],
                                                          .init(reason: "secret-tool (pid 4242) wants to read \"Wi-Fi\"", unrecorded: true)))),
            ("request-presence-unrecorded", GateRequest(.presence(internetItem, .init(reason: "floor", unrecorded: true)))),
        ]
        let good = requests[2].1.encoded()
        func layout(_ request: GateRequest, _ change: (inout GateRequestLayout) -> Void) -> [UInt8] {
            var layout = GateRequestLayout(request)
            change(&layout)
            return layout.encoded()
        }
        let open = requests[2].1
        let malformed: [(String, [UInt8])] = [
            ("bad-request-empty", []),
            ("bad-request-truncated", Array(good.dropLast(7))),
            ("bad-request-trailing", good + [0]),
            ("bad-request-version", [good[0], 2] + good.dropFirst(2)),
            ("bad-request-operation", [good[0], good[1], 200] + good.dropFirst(3)),
            ("bad-request-flags-on-status", layout(GateRequest(.status)) { $0.flags.insert(.unrecorded) }),
            ("bad-request-unrecorded-fresh", layout(open) { $0.flags.formUnion([.unrecorded, .fresh]) }),
            ("bad-request-unrecorded-handle", layout(open) { $0.flags.insert(.unrecorded); $0.handle = filled(32, 2) }),
            ("bad-request-unrecorded-issue-handle", layout(open) { $0.flags.formUnion([.unrecorded, .issueHandle]); $0.handleSeconds = 30 }),
            ("bad-request-unrecorded-unlocking", layout(open) { $0.flags.formUnion([.unrecorded, .unlocking]) }),
            ("bad-request-unrecorded-validate", layout(GateRequest(.validate(.init()))) { $0.flags.insert(.unrecorded) }),
            ("bad-request-open-no-item", layout(open) { $0.identity = nil }),
            ("bad-request-handle", layout(open) { $0.handle = [1, 2, 3] }),
            ("bad-request-class-box", layout(open) { $0.boxes = [box(.accessClass, 0x70)] }),
            ("bad-request-nul-reason", layout(open) { $0.reason = "a\u{0}b" }),
            ("bad-request-status-with-box", layout(GateRequest(.status)) { $0.boxes = [box(.presence, 1)] }),
            ("bad-request-validate-with-handle", layout(GateRequest(.validate(.init()))) { $0.handle = filled(32, 1) }),
            ("bad-request-open-for-user", layout(open) { $0.flags.insert(.forUser); $0.subjectUID = 0 }),
            ("bad-request-open-keys-without-unlocking", layout(open) { $0.classKeys = [classKey(0x71)] }),
            ("bad-request-keys-unlocking", layout(requests[0].1) { $0.flags.insert(.unlocking) }),
            ("bad-request-certify-unlocking", layout(GateRequest(.certify(.init(classKeys: [classKey(7)])))) { $0.flags.insert(.unlocking) }),
        ]

        let answers: [GateAnswer] = [
            .keys([.init(kind: .presence, key: filled(32, 0x90)), .init(kind: .currentSet, key: filled(32, 0x91)),
                   .init(kind: .device, key: filled(32, 0x92))]),
            .open(shares: [.init(index: 0, share: filled(32, 0x80)), .init(index: 2, share: filled(32, 0x81))],
                  handle: filled(GateRequest.handleBytes, 0x82)),
            .authenticate(seals: [.init(accessibility: .whenUnlocked, seal: filled(32, 0xa0))], handle: []),
            .legacyClassSeed(seed: filled(BoxKeyPair.seedBytes, 0xb0)),
            .presence(handle: filled(GateRequest.handleBytes, 0x83)),
            .forget,
            .certify(seals: [.init(accessibility: .whenUnlocked, seal: filled(32, 0xa0)),
                             .init(accessibility: .afterFirstUnlockThisDeviceOnly, seal: filled(32, 0xa1))]),
            .check(invalid: [1]),
            .status(lockoutSecondsLeft: 42, failedAttempts: 3),
            .validate(),
            .fingerprintState(domainState: filled(32, 0xc0), biometryLockedOut: true),
            .fingerUnlockArm(publicKey: filled(32, 0xd0)),
            .fingerUnlock(masterKey: filled(32, 0xe0)),
        ]
        // What an `unlocking` run settled: the seals and the finger unlock's key, as the answer's typed fields.
        let settled = GateAnswer.Settled(seals: [.init(accessibility: .whenUnlocked, seal: filled(32, 0xa2)),
                                                 .init(accessibility: .afterFirstUnlock, seal: filled(32, 0xa3))],
                                         fingerUnlockKey: filled(32, 0xd1))
        let unlockingAnswers: [(String, GateAnswer)] = [
            ("message-result-open-unlocking", .open(shares: [.init(index: 0, share: filled(32, 0x84))], handle: [], settled: settled)),
            ("message-result-presence-unlocking", .presence(handle: [], settled: settled)),
            ("message-result-validate-unlocking", .validate(settled: settled)),
            ("message-result-authenticate-unlocking", .authenticate(seals: settled.seals, handle: [], fingerUnlockKey: settled.fingerUnlockKey)),
        ]
        // The selector byte: even, a request; odd, a message answering operation ((selector >> 1) % 13) + 1.
        func selector(_ operation: GateRequest.Operation) -> UInt8 { UInt8((Int(operation.rawValue) - 1) << 1 | 1) }
        var messages: [(String, [UInt8])] = answers.map { answer in
            ("message-result-\(answer.operation)", [selector(answer.operation)] + GateMessage.result(.answer(answer)).encoded())
        }
        messages += [
            ("message-prompt-secret", [1] + GateMessage.promptSecret("Password: ").encoded()),
            ("message-prompt-visible", [1] + GateMessage.promptVisible("Touch the key, then type its code: ").encoded()),
            ("message-notice", [1] + GateMessage.notice("3 tries left").encoded()),
            ("message-audit", [1] + GateMessage.audit(event: "auth-failure", service: "keygate", detail: "incorrect password").encoded()),
            ("message-result-failure", [selector(.open)]
                + GateMessage.result(.failure(.authFailed("the password was wrong 3 times: try again in 60 s"))).encoded()),
            ("bad-message-status", [1, UInt8(ascii: "R"), 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]),
            ("bad-message-kind", [1, UInt8(ascii: "X"), 0, 0]),
            ("bad-message-trailing", [1] + GateMessage.notice("hi").encoded() + [0]),
            ("bad-message-shares-for-status", [selector(.status)] + GateMessage.result(.answer(answers[1])).encoded()),
            // A lockout flag of 0xb0 once decoded as true and re-encoded as 1: one encoding, so it is refused.
            ("bad-message-lockout-flag", [0x01, 0x52, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20, 0xb0, 0, 0, 0x04, 0, 0, 0x01, 0, 0xb0]),
            ("bad-message-lockout-flag-state", [selector(.fingerprintState), 0x52, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                                0, 0, 0, 0, 0, 0, 0, 0, 0, 0xb0]),
            ("bad-message-settled-for-check", [selector(.check)] + GateMessage.result(.answer(unlockingAnswers[2].1)).encoded()),
        ]
        messages += unlockingAnswers.map { ($0.0, [selector($0.1.operation)] + GateMessage.result(.answer($0.1)).encoded()) }
        return requests.map { ($0.0, [0] + $0.1.encoded()) } + malformed.map { ($0.0, [0] + $0.1) } + messages
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzGatekeeperInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let dir = getenv("KEYGATE_FUZZ_MAKE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    for (name, frame) in GateFuzz.seeds() {
        guard let file = fopen(dir + "/" + name, "wb") else {
            fputs("cannot write \(dir)/\(name)\n", stderr)
            exit(1)
        }
        _ = frame.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGatekeeperRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let selector = input.byte()
    let frame = input.rest()
    if selector & 1 == 0 {
        GateFuzz.request(frame)
    } else {
        GateFuzz.message(frame, answering: GateFuzz.operation(selector))
    }
    return 0
}
