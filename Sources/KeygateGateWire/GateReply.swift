// What keygate-gatekeeper sends back (docs/GATEKEEPER.md): prompts to relay to the person
// ('P' without echo, 'E' with echo, 'I' a notice), what happened for the client's audit
// trail ('U': an authentication's success, failure or lockout, with its PAM service; the
// client writes the line with its own item and scope), each prompt answered by the client with
// 'A' (the answer) or 'C' (a cancel), and one final result ('R'): a status, a message,
// and whatever the operation returns. The shares and seeds in a result are secrets: the
// client copies them into locked memory and wipes the frame.
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
        case .result(let result): w.u8(UInt8(ascii: "R")); result.write(to: &w)
        }
        return w.bytes
    }

    package static func decode(_ frame: [UInt8]) throws -> GateMessage {
        var r = ByteReader(frame)
        let message: GateMessage
        switch try r.u8() {
        case UInt8(ascii: "P"): message = .promptSecret(try r.string(max: maxTextBytes))
        case UInt8(ascii: "E"): message = .promptVisible(try r.string(max: maxTextBytes))
        case UInt8(ascii: "I"): message = .notice(try r.string(max: maxTextBytes))
        case UInt8(ascii: "U"):
            message = .audit(event: try r.string(max: maxTextBytes), service: try r.string(max: maxTextBytes),
                             detail: try r.string(max: maxTextBytes))
        case UInt8(ascii: "R"): message = .result(try GateResult.read(&r))
        default: throw GateWireError.malformed("an unknown message from the gatekeeper")
        }
        guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes after a message") }
        return message
    }

    private static func cut(_ text: String) -> String {
        GateWire.prefix(text, maxBytes: maxTextBytes)
    }
}

/// The final answer to a request.
package struct GateResult: Equatable {
    /// nil on success, else the error's code (its message is `message`).
    package var error: KeychainError.Code?
    package var message: String = ""
    /// open: the opened share of each requested box, by the box's index in the request.
    package var shares: [(index: UInt8, share: [UInt8])] = []
    /// keys: the gate public keys of the item, by slot kind.
    package var publicKeys: [(kind: GateKind, key: [UInt8])] = []
    /// authenticate: the gatekeeper's seal on each class public key sent.
    package var seals: [(accessibility: Accessibility, seal: [UInt8])] = []
    /// open with issueHandle: the new authentication-context handle.
    package var handle: [UInt8] = []
    /// legacyClassSeed: the 1.x device-bound seed.
    package var seed: [UInt8] = []
    /// check: the indices of the boxes whose key the gatekeeper no longer derives.
    package var invalid: [UInt8] = []
    /// status: the seconds left of the user's lockout (0: none), and the failed attempts counted since
    /// the last success. On the wire only when either is not 0, after every other field: a result
    /// without them is byte for byte what a gatekeeper before them sent, so a program built with an
    /// older Keygate library still reads every answer of this gatekeeper (it never asks `status`).
    package var lockoutSecondsLeft: UInt32 = 0
    package var failedAttempts: UInt32 = 0
    /// fingerprintState: the enrolled set's domain state (empty: no finger enrolled), and whether
    /// biometry is locked out. On the wire only when either is set, after the lockout pair (then
    /// always written): only the fingerprintState operation sets them, which no older client sends.
    package var domainState: [UInt8] = []
    package var biometryLockedOut = false

    package init(error: KeychainError.Code? = nil, message: String = "") {
        self.error = error
        self.message = message
    }

    package static func failure(_ error: KeychainError) -> GateResult { GateResult(error: error.code, message: error.message) }

    package var keychainError: KeychainError? { error.map { KeychainError($0, message) } }

    /// Zeroes the secrets a result carries (the shares, the seed, the handle) once it is sent.
    package mutating func wipeSecrets() {
        for index in shares.indices { Sodium.wipe(&shares[index].share) }
        Sodium.wipe(&seed)
        Sodium.wipe(&handle)
    }

    package static func == (a: GateResult, b: GateResult) -> Bool {
        a.error == b.error && a.message == b.message && a.handle == b.handle && a.seed == b.seed && a.invalid == b.invalid
            && a.lockoutSecondsLeft == b.lockoutSecondsLeft && a.failedAttempts == b.failedAttempts
            && a.domainState == b.domainState && a.biometryLockedOut == b.biometryLockedOut
            && a.shares.map(\.index) == b.shares.map(\.index) && a.shares.map(\.share) == b.shares.map(\.share)
            && a.publicKeys.map(\.kind) == b.publicKeys.map(\.kind) && a.publicKeys.map(\.key) == b.publicKeys.map(\.key)
            && a.seals.map(\.accessibility) == b.seals.map(\.accessibility) && a.seals.map(\.seal) == b.seals.map(\.seal)
    }

    fileprivate func write(to w: inout ByteWriter) {
        w.i32(error?.status ?? 0)
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

    fileprivate static func read(_ r: inout ByteReader) throws -> GateResult {
        var result = GateResult()
        let status = try r.i32()
        if status != 0 {
            guard let code = KeychainError.Code.allCases.first(where: { $0.status == status }) else {
                throw GateWireError.malformed("an unknown status \(status)")
            }
            result.error = code
        }
        result.message = try r.string(max: GateMessage.maxTextBytes)
        for _ in 0..<Int(try r.u8()) { result.shares.append((try r.u8(), try r.tiny())) }
        for _ in 0..<Int(try r.u8()) {
            guard let kind = GateKind(rawValue: try r.u8()) else { throw GateWireError.malformed("an unknown key kind") }
            result.publicKeys.append((kind, try r.raw(BoxKeyPair.publicKeyBytes)))
        }
        for _ in 0..<Int(try r.u8()) {
            guard let a = Accessibility(blobCode: try r.u8()) else { throw GateWireError.malformed("an unknown class") }
            result.seals.append((a, try r.raw(GateRequest.sealBytes)))
        }
        result.handle = try r.tiny()
        result.seed = try r.tiny()
        result.invalid = try r.tiny()
        if !r.isAtEnd {
            result.lockoutSecondsLeft = try r.u32()
            result.failedAttempts = try r.u32()
        }
        if !r.isAtEnd {
            result.domainState = try r.tiny()
            result.biometryLockedOut = try r.u8() != 0
        }
        return result
    }
}
