// What keygate-gatekeeper sends back (docs/GATEKEEPER.md): prompts to relay to the person
// ('P' without echo, 'E' with echo, 'I' a notice), what happened for the client's audit
// trail ('U': an authentication's success, failure or lockout, with its PAM service; the
// client writes the line with its own item and scope), each prompt answered by the client with
// 'A' (the answer) or 'C' (a cancel), and one final result ('R'): a failure (a status and a
// message), or the operation's answer, one case per operation with its own fields
// (GateAnswer). The bytes are the version-1 layout (GateResultLayout), read for the operation
// the client asked, which a result frame does not name. The shares, seeds and keys in an
// answer are secrets: the client copies them into locked memory and wipes the frame.
import KeygateCore

package enum GateMessage: Equatable {
    case promptSecret(String)
    case promptVisible(String)
    case notice(String)
    case audit(event: String, service: String, detail: String)
    case result(GateResult)

    package static let maxTextBytes = 2048

    /// The client's answer frame to a prompt ('A' and the answer, or 'C' for a cancel).
    package static func answerFrame(_ answer: SecureBytes?) -> [UInt8] {
        guard let answer else { return [UInt8(ascii: "C")] }
        return [UInt8(ascii: "A")] + answer.unprotectedCopy()
    }

    package func encoded() -> [UInt8] {
        var w = ByteWriter()
        switch self {
        case .promptSecret(let text): w.u8(UInt8(ascii: "P")); w.string(Self.cut(text))
        case .promptVisible(let text): w.u8(UInt8(ascii: "E")); w.string(Self.cut(text))
        case .notice(let text): w.u8(UInt8(ascii: "I")); w.string(Self.cut(text))
        case .audit(let event, let service, let detail):
            w.u8(UInt8(ascii: "U")); w.string(Self.cut(event)); w.string(Self.cut(service)); w.string(Self.cut(detail))
        case .result(let result): w.u8(UInt8(ascii: "R")); GateResultLayout(result).write(to: &w)
        }
        return w.bytes
    }

    /// Decodes one message of the gatekeeper's answer to an `operation` request.
    package static func decode(_ frame: [UInt8], answering operation: GateRequest.Operation) throws -> GateMessage {
        var r = ByteReader(frame)
        let message: GateMessage
        switch try r.u8() {
        case UInt8(ascii: "P"): message = .promptSecret(try r.string(max: maxTextBytes))
        case UInt8(ascii: "E"): message = .promptVisible(try r.string(max: maxTextBytes))
        case UInt8(ascii: "I"): message = .notice(try r.string(max: maxTextBytes))
        case UInt8(ascii: "U"):
            message = .audit(event: try r.string(max: maxTextBytes), service: try r.string(max: maxTextBytes),
                             detail: try r.string(max: maxTextBytes))
        case UInt8(ascii: "R"): message = .result(try GateResultLayout.read(&r).result(answering: operation))
        default: throw GateWireError.malformed("an unknown message from the gatekeeper")
        }
        guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes after a message") }
        // One encoding per message: a result with a field its operation does not return, or written another way, is refused.
        if case .result = message, message.encoded() != frame {
            throw GateWireError.malformed("a result with a field the \(operation) operation does not return")
        }
        return message
    }

    private static func cut(_ text: String) -> String {
        GateWire.prefix(text, maxBytes: maxTextBytes)
    }
}

/// The final answer to a request: a failure, or the operation's answer.
package enum GateResult: Equatable, Sendable {
    case answer(GateAnswer)
    case failure(KeychainError.Code, message: String)

    package static func failure(_ error: KeychainError) -> GateResult { .failure(error.code, message: error.message) }

    package var keychainError: KeychainError? {
        guard case .failure(let code, let message) = self else { return nil }
        return KeychainError(code, message)
    }

    /// The answer, or the failure thrown.
    package func get() throws -> GateAnswer {
        switch self {
        case .answer(let answer): return answer
        case .failure(let code, let message): throw KeychainError(code, message)
        }
    }

    /// Zeroes the secrets an answer carries (shares, seeds, keys, handles) once it is sent or read.
    package mutating func wipeSecrets() {
        guard case .answer(var answer) = self else { return }
        answer.wipeSecrets()
        self = .answer(answer)
    }
}

/// What each operation returns (GateRequest.Call's cases, in the same order).
package enum GateAnswer: Equatable, Sendable {
    /// keys: the item's gate public keys, by slot kind.
    case keys([PublicKey])
    /// open: the opened share of each requested box, by the box's index in the request; a new
    /// authentication-context handle when one was asked for (else empty); what `unlocking` settled.
    case open(shares: [Share], handle: [UInt8], settled: Settled = .nothing)
    /// authenticate: the gatekeeper's seal on each class public key sent; a handle when asked;
    /// with `unlocking`, the finger unlock's public key armed in the same run (empty: none).
    case authenticate(seals: [Seal], handle: [UInt8], fingerUnlockKey: [UInt8] = [])
    /// legacyClassSeed: the 1.x device-bound seed.
    case legacyClassSeed(seed: [UInt8])
    /// presence: a handle when asked (else empty); what `unlocking` settled.
    case presence(handle: [UInt8], settled: Settled = .nothing)
    case forget
    case certify(seals: [Seal])
    /// check: the indices of the boxes whose key the gatekeeper no longer derives.
    case check(invalid: [UInt8])
    /// status: the seconds left of the user's lockout (0: none), and the failed attempts counted
    /// since the last success.
    case status(lockoutSecondsLeft: UInt32, failedAttempts: UInt32)
    /// validate: what `unlocking` settled.
    case validate(settled: Settled = .nothing)
    /// fingerprintState: the enrolled set's domain state (empty: no finger), and the biometric lockout.
    case fingerprintState(domainState: [UInt8], biometryLockedOut: Bool)
    /// fingerUnlockArm: the public key to seal the master key to (empty: the finger unlock is off).
    case fingerUnlockArm(publicKey: [UInt8])
    /// fingerUnlock: the master key, opened.
    case fingerUnlock(masterKey: [UInt8])

    package struct Share: Equatable, Sendable {
        package var index: UInt8
        package var share: [UInt8]
        package init(index: UInt8, share: [UInt8]) { self.index = index; self.share = share }
    }

    package struct PublicKey: Equatable, Sendable {
        package var kind: GateKind
        package var key: [UInt8]
        package init(kind: GateKind, key: [UInt8]) { self.kind = kind; self.key = key }
    }

    package struct Seal: Equatable, Sendable {
        package var accessibility: Accessibility
        package var seal: [UInt8]
        package init(accessibility: Accessibility, seal: [UInt8]) { self.accessibility = accessibility; self.seal = seal }
    }

    /// What an `unlocking` request's run settled besides its operation, once PAM took a typed
    /// password in it (GateRequest.Presence.unlocking): root's seals on the class keys sent (as
    /// `certify` answers) and the finger unlock's new public key (as `fingerUnlockArm` answers;
    /// empty: the finger unlock is off). Nothing, for any other request, or one answered from a
    /// window or a handle. On the wire: the result's seals and seed fields.
    package struct Settled: Equatable, Sendable {
        package var seals: [Seal]
        package var fingerUnlockKey: [UInt8]
        package init(seals: [Seal] = [], fingerUnlockKey: [UInt8] = []) {
            self.seals = seals
            self.fingerUnlockKey = fingerUnlockKey
        }
        package static let nothing = Settled()
    }

    /// The operation this answers.
    package var operation: GateRequest.Operation {
        switch self {
        case .keys: return .keys
        case .open: return .open
        case .authenticate: return .authenticate
        case .legacyClassSeed: return .legacyClassSeed
        case .presence: return .presence
        case .forget: return .forget
        case .certify: return .certify
        case .check: return .check
        case .status: return .status
        case .validate: return .validate
        case .fingerprintState: return .fingerprintState
        case .fingerUnlockArm: return .fingerUnlockArm
        case .fingerUnlock: return .fingerUnlock
        }
    }

    /// The authentication-context handle the gatekeeper issued (open, presence, authenticate; empty: none).
    package var issuedHandle: [UInt8]? {
        switch self {
        case .open(_, let handle, _), .authenticate(_, let handle, _), .presence(let handle, _): return handle
        default: return nil
        }
    }

    /// What an `unlocking` request's run settled (open, presence, validate, authenticate; else nothing).
    package var settled: Settled {
        switch self {
        case .open(_, _, let settled), .presence(_, let settled), .validate(let settled): return settled
        case .authenticate(let seals, _, let key): return Settled(seals: seals, fingerUnlockKey: key)
        default: return .nothing
        }
    }

    package mutating func wipeSecrets() {
        switch self {
        case .open(var shares, var handle, let settled):
            for index in shares.indices { Sodium.wipe(&shares[index].share) }
            Sodium.wipe(&handle)
            self = .open(shares: shares, handle: handle, settled: settled)
        case .authenticate(let seals, var handle, let key):
            Sodium.wipe(&handle)
            self = .authenticate(seals: seals, handle: handle, fingerUnlockKey: key)
        case .presence(var handle, let settled):
            Sodium.wipe(&handle)
            self = .presence(handle: handle, settled: settled)
        case .legacyClassSeed(var seed):
            Sodium.wipe(&seed)
            self = .legacyClassSeed(seed: seed)
        case .fingerUnlock(var key):
            Sodium.wipe(&key)
            self = .fingerUnlock(masterKey: key)
        case .keys, .forget, .certify, .check, .status, .validate, .fingerprintState, .fingerUnlockArm:
            break
        }
    }
}

/// The bytes of a result ('R'), version 1: the status (0 or a KeychainError's), the message,
/// the shares, the public keys, the seals, the handle, the seed, the invalid boxes; then the
/// lockout pair when either is not 0 or a fingerprint state follows; then the fingerprint state
/// when it is set (the lockout flag one byte, 0 or 1). Every answer writes all of them, each
/// empty where it returns none, so every release answers in the same bytes (a program built
/// with an older library still reads it). An `unlocking` request's settlement
/// (GateAnswer.Settled) is the seals and the seed of an open, presence, validate or authenticate.
/// The one place the layout lives; GateAnswer maps onto it.
struct GateResultLayout {
    var status: Int32 = 0
    var message = ""
    var shares: [GateAnswer.Share] = []
    var publicKeys: [GateAnswer.PublicKey] = []
    var seals: [GateAnswer.Seal] = []
    var handle: [UInt8] = []
    var seed: [UInt8] = []
    var invalid: [UInt8] = []
    var lockoutSecondsLeft: UInt32 = 0
    var failedAttempts: UInt32 = 0
    var domainState: [UInt8] = []
    var biometryLockedOut = false

    init() {}

    init(_ result: GateResult) {
        switch result {
        case .failure(let code, let text):
            status = code.status
            message = text
        case .answer(let answer):
            switch answer {
            case .keys(let keys): publicKeys = keys
            case .open(let opened, let issued, let settled): (shares, handle, seals, seed) = (opened, issued, settled.seals, settled.fingerUnlockKey)
            case .authenticate(let sealed, let issued, let key): (seals, handle, seed) = (sealed, issued, key)
            case .legacyClassSeed(let bytes): seed = bytes
            case .presence(let issued, let settled): (handle, seals, seed) = (issued, settled.seals, settled.fingerUnlockKey)
            case .validate(let settled): (seals, seed) = (settled.seals, settled.fingerUnlockKey)
            case .forget: break
            case .certify(let sealed): seals = sealed
            case .check(let indices): invalid = indices
            case .status(let left, let failed): (lockoutSecondsLeft, failedAttempts) = (left, failed)
            case .fingerprintState(let state, let locked): (domainState, biometryLockedOut) = (state, locked)
            case .fingerUnlockArm(let key): seed = key
            case .fingerUnlock(let key): seed = key
            }
        }
    }

    /// An `unlocking` request's settlement, as these fields hold it.
    private var settled: GateAnswer.Settled { GateAnswer.Settled(seals: seals, fingerUnlockKey: seed) }

    /// The result these fields hold for `operation` (fields it does not return are refused by the
    /// caller, which compares the encoding).
    func result(answering operation: GateRequest.Operation) throws -> GateResult {
        if status != 0 {
            guard let code = KeychainError.Code.allCases.first(where: { $0.status == status }) else {
                throw GateWireError.malformed("an unknown status \(status)")
            }
            return .failure(code, message: message)
        }
        let answer: GateAnswer
        switch operation {
        case .keys: answer = .keys(publicKeys)
        case .open: answer = .open(shares: shares, handle: handle, settled: settled)
        case .authenticate: answer = .authenticate(seals: seals, handle: handle, fingerUnlockKey: seed)
        case .legacyClassSeed: answer = .legacyClassSeed(seed: seed)
        case .presence: answer = .presence(handle: handle, settled: settled)
        case .forget: answer = .forget
        case .certify: answer = .certify(seals: seals)
        case .check: answer = .check(invalid: invalid)
        case .status: answer = .status(lockoutSecondsLeft: lockoutSecondsLeft, failedAttempts: failedAttempts)
        case .validate: answer = .validate(settled: settled)
        case .fingerprintState: answer = .fingerprintState(domainState: domainState, biometryLockedOut: biometryLockedOut)
        case .fingerUnlockArm: answer = .fingerUnlockArm(publicKey: seed)
        case .fingerUnlock: answer = .fingerUnlock(masterKey: seed)
        }
        return .answer(answer)
    }

    func write(to w: inout ByteWriter) {
        w.i32(status)
        w.string(GateWire.prefix(message, maxBytes: GateMessage.maxTextBytes))
        w.u8(UInt8(shares.count))
        for s in shares { w.u8(s.index); w.tiny(s.share) }
        w.u8(UInt8(publicKeys.count))
        for k in publicKeys { w.u8(k.kind.rawValue); w.raw(k.key) }
        w.u8(UInt8(seals.count))
        for s in seals { w.u8(s.accessibility.blobCode); w.raw(s.seal) }
        w.tiny(handle)
        w.tiny(seed)
        w.tiny(invalid)
        let fingerprint = !domainState.isEmpty || biometryLockedOut
        if lockoutSecondsLeft != 0 || failedAttempts != 0 || fingerprint {
            w.u32(lockoutSecondsLeft)
            w.u32(failedAttempts)
        }
        if fingerprint {
            w.tiny(domainState)
            w.u8(biometryLockedOut ? 1 : 0)
        }
    }

    static func read(_ r: inout ByteReader) throws -> GateResultLayout {
        var layout = GateResultLayout()
        layout.status = try r.i32()
        layout.message = try r.string(max: GateMessage.maxTextBytes)
        for _ in 0..<Int(try r.u8()) { layout.shares.append(GateAnswer.Share(index: try r.u8(), share: try r.tiny())) }
        for _ in 0..<Int(try r.u8()) {
            guard let kind = GateKind(rawValue: try r.u8()) else { throw GateWireError.malformed("an unknown key kind") }
            layout.publicKeys.append(GateAnswer.PublicKey(kind: kind, key: try r.raw(BoxKeyPair.publicKeyBytes)))
        }
        for _ in 0..<Int(try r.u8()) {
            guard let a = Accessibility(blobCode: try r.u8()) else { throw GateWireError.malformed("an unknown class") }
            layout.seals.append(GateAnswer.Seal(accessibility: a, seal: try r.raw(GateRequest.sealBytes)))
        }
        layout.handle = try r.tiny()
        layout.seed = try r.tiny()
        layout.invalid = try r.tiny()
        if !r.isAtEnd {
            layout.lockoutSecondsLeft = try r.u32()
            layout.failedAttempts = try r.u32()
        }
        if !r.isAtEnd {
            layout.domainState = try r.tiny()
            switch try r.u8() {
            case 0: layout.biometryLockedOut = false
            case 1: layout.biometryLockedOut = true
            // One encoding per result: any other byte would read as true and be written back as 1.
            case let other: throw GateWireError.malformed("a biometric lockout flag of \(other), neither 0 nor 1")
            }
        }
        return layout
    }
}
