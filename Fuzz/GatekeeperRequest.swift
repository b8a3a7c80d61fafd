// Fuzz harness for keygate-gatekeeper's wire decoders (Sources/KeygateGateWire): the
// first byte picks the decoder, the rest is one frame. Even: GateRequest.decode, what the
// setuid-root gatekeeper reads from any user; odd: GateMessage.decode, what the client
// reads back (prompts, notices, the result). Invariants: nothing traps; a refusal is
// GateWireError.malformed with a message; decoding is deterministic (the same request or
// the same refusal twice); an accepted frame re-encodes (`encoded()`) to exactly its
// bytes, so the wire format is canonical and no two frames mean the same thing; an
// accepted request keeps the limits the gatekeeper relies on (an item for an item
// operation, handle, seal and seed sizes, at most 17 boxes, none of the class kind).
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
        if request.operation == .keys || request.operation == .open {
            require(request.identity != nil, "an item operation accepted without an item")
        }
        require(request.handle.isEmpty || request.handle.count == GateRequest.handleBytes, "a handle of \(request.handle.count) bytes")
        require(request.seed.isEmpty || request.seed.count == BoxKeyPair.seedBytes, "a seed of \(request.seed.count) bytes")
        require(request.reason.utf8.count <= GateRequest.maxReasonBytes, "a reason of \(request.reason.utf8.count) bytes")
        require(request.boxes.count <= GatedBlob.maxGates + 1, "\(request.boxes.count) boxes")
        for box in request.boxes {
            require(box.kind != .accessClass, "a box of the class kind")
            require(box.keyID.count == BoxKeyPair.keyIDBytes && box.sealed.count == GatedBlob.boxBytes, "a box of the wrong size")
        }
        for key in request.classKeys {
            require(key.publicKey.count == BoxKeyPair.publicKeyBytes, "a class key of \(key.publicKey.count) bytes")
            require(key.seal.isEmpty || key.seal.count == GateRequest.sealBytes, "a seal of \(key.seal.count) bytes")
        }
    }

    static func message(_ frame: [UInt8]) {
        let first = decode("GateMessage.decode") { try GateMessage.decode(frame) }
        let second = decode("GateMessage.decode") { try GateMessage.decode(frame) }
        require(first == second, "GateMessage.decode is not deterministic")
        guard case .accepted(let message) = first else {
            FuzzStats.record(refused: true)
            return
        }
        FuzzStats.record(refused: false)
        let again = message.encoded()
        require(again == frame, "an accepted message re-encodes to other bytes (\(again.count) against \(frame.count)): decode is not canonical")
        require(decode("GateMessage.decode of encoded()") { try GateMessage.decode(again) } == .accepted(message),
                "an accepted message does not decode to itself after encoded()")
        switch message {
        case .promptSecret(let text), .promptVisible(let text), .notice(let text):
            require(text.utf8.count <= GateMessage.maxTextBytes, "a prompt of \(text.utf8.count) bytes")
        case .audit(let event, let service, let detail):
            require([event, service, detail].allSatisfy { $0.utf8.count <= GateMessage.maxTextBytes }, "an audit field over the cap")
        case .result(let result):
            require(result.message.utf8.count <= GateMessage.maxTextBytes, "a result message of \(result.message.utf8.count) bytes")
            if let error = result.error { require(error.status != 0, "an error with status 0") }
            require(result.publicKeys.allSatisfy { $0.key.count == BoxKeyPair.publicKeyBytes }, "a public key of the wrong size")
            require(result.seals.allSatisfy { $0.seal.count == GateRequest.sealBytes }, "a seal of the wrong size")
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

    static func seeds() -> [(String, [UInt8])] {
        var keys = GateRequest(operation: .keys, accessControl: 1 << 14 | 1, identity: generic)
        keys.classKeys = [GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: filled(32, 0x21), seal: filled(32, 0x22))]
        let keysInternet = GateRequest(operation: .keys, accessControl: 1 << 3, identity: internet)
        var open = GateRequest(operation: .open, flags: [.noPrompt], accessControl: 1, identity: generic)
        open.reason = "read the VPN password"
        open.boxes = [box(.presence, 0x30)]
        var openAll = GateRequest(operation: .open, flags: [.fresh, .issueHandle], accessControl: 1 << 15 | 1 << 4 | 1 << 3,
                                  identity: internet)
        openAll.reason = "ouvrir l’élément"
        openAll.handle = filled(GateRequest.handleBytes, 0x40)
        openAll.boxes = [box(.presence, 0x41), box(.currentSet, 0x42), box(.device, 0x43)]
        var authenticate = GateRequest(operation: .authenticate)
        authenticate.reason = "unlock the keychain"
        authenticate.classKeys = Accessibility.allCases.enumerated().map { index, a in
            GateRequest.ClassKey(accessibility: a, publicKey: filled(32, UInt8(0x50 + index)), seal: [])
        }
        var legacy = GateRequest(operation: .legacyClassSeed)
        legacy.seed = filled(BoxKeyPair.seedBytes, 0x60)
        var legacyItem = GateRequest(operation: .legacyClassSeed, identity: generic)
        legacyItem.seed = filled(BoxKeyPair.seedBytes, 0x61)

        let requests: [(String, [UInt8])] = [
            ("request-keys-generic", keys.encoded()), ("request-keys-internet", keysInternet.encoded()),
            ("request-open-presence", open.encoded()), ("request-open-three-boxes", openAll.encoded()),
            ("request-authenticate", authenticate.encoded()), ("request-legacy-seed", legacy.encoded()),
            ("request-legacy-seed-item", legacyItem.encoded()),
            ("request-presence", GateRequest(operation: .presence, flags: [.fresh, .issueHandle], accessControl: 1,
                                             identity: generic, reason: "why", handleSeconds: 300).encoded()),
            ("request-check", GateRequest(operation: .check, accessControl: 8, identity: generic,
                                          boxes: [box(.currentSet, 5), box(.device, 6)]).encoded()),
            ("request-certify", GateRequest(operation: .certify, classKeys: [GateRequest.ClassKey(
                accessibility: .whenUnlocked, publicKey: filled(BoxKeyPair.publicKeyBytes, 7), seal: [])]).encoded()),
            ("request-forget-all", GateRequest(operation: .forget, flags: .all).encoded()),
            ("request-validate", GateRequest(operation: .validate, flags: .fresh, reason: "validate").encoded()),
            ("request-certify-for-user", GateRequest(operation: .certify, flags: .noPrompt, classKeys: [GateRequest.ClassKey(
                accessibility: .whenUnlocked, publicKey: filled(BoxKeyPair.publicKeyBytes, 7), seal: [])], subjectUID: 1000).encoded()),
            ("request-fingerprint-state", GateRequest(operation: .fingerprintState, flags: .noPrompt).encoded()),
            ("request-finger-unlock-arm", GateRequest(operation: .fingerUnlockArm).encoded()),
            ("request-finger-unlock", GateRequest(operation: .fingerUnlock, reason: "unlock",
                                                  seed: filled(GateRequest.sealedMasterKeyBytes, 9)).encoded()),
            ("request-authenticate-biometric", GateRequest(operation: .authenticate, flags: [.biometric, .issueHandle],
                                                           reason: "LAContext", handleSeconds: 10).encoded()),
        ]
        let good = open.encoded()
        var malformed: [(String, [UInt8])] = [
            ("bad-request-empty", []),
            ("bad-request-truncated", Array(good.dropLast(7))),
            ("bad-request-trailing", good + [0]),
            ("bad-request-version", [good[0], 2] + good.dropFirst(2)),
            ("bad-request-operation", [good[0], good[1], 200] + good.dropFirst(3)),
            ("bad-request-flags", [good[0], good[1], good[2], 0x80] + good.dropFirst(4)),
            ("bad-request-open-no-item", GateRequest(operation: .open).encoded()),
        ]
        var shortHandle = open
        shortHandle.handle = [1, 2, 3]
        malformed.append(("bad-request-handle", shortHandle.encoded()))
        var classBox = open
        classBox.boxes = [box(.accessClass, 0x70)]
        malformed.append(("bad-request-class-box", classBox.encoded()))
        var nulReason = open
        nulReason.reason = "a\u{0}b"
        malformed.append(("bad-request-nul-reason", nulReason.encoded()))

        var opened = GateResult()
        opened.shares = [(0, filled(32, 0x80)), (2, filled(32, 0x81))]
        opened.handle = filled(GateRequest.handleBytes, 0x82)
        var published = GateResult()
        published.publicKeys = [(.presence, filled(32, 0x90)), (.currentSet, filled(32, 0x91)), (.device, filled(32, 0x92))]
        var sealed = GateResult()
        sealed.seals = [(.whenUnlocked, filled(32, 0xa0)), (.afterFirstUnlockThisDeviceOnly, filled(32, 0xa1))]
        var seed = GateResult()
        seed.seed = filled(BoxKeyPair.seedBytes, 0xb0)
        let messages: [(String, [UInt8])] = [
            ("message-prompt-secret", GateMessage.promptSecret("Password: ").encoded()),
            ("message-prompt-visible", GateMessage.promptVisible("Touch the key, then type its code: ").encoded()),
            ("message-notice", GateMessage.notice("3 tries left").encoded()),
            ("message-audit", GateMessage.audit(event: "auth-failure", service: "keygate", detail: "incorrect password").encoded()),
            ("message-result-shares", GateMessage.result(opened).encoded()),
            ("message-result-keys", GateMessage.result(published).encoded()),
            ("message-result-seals", GateMessage.result(sealed).encoded()),
            ("message-result-seed", GateMessage.result(seed).encoded()),
            ("message-result-failure", GateMessage.result(.failure(.authFailed("the password was wrong 3 times: try again in 60 s"))).encoded()),
            ("bad-message-status", [UInt8(ascii: "R"), 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0]),
            ("bad-message-kind", [UInt8(ascii: "X"), 0, 0]),
            ("bad-message-trailing", GateMessage.notice("hi").encoded() + [0]),
        ]
        // The selector byte: 0 (even) a request, 1 (odd) a message.
        return requests.map { ($0.0, [0] + $0.1) } + malformed.map { ($0.0, [0] + $0.1) } + messages.map { ($0.0, [1] + $0.1) }
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
        GateFuzz.message(frame)
    }
    return 0
}
