// What a client asks keygate-gatekeeper (docs/GATEKEEPER.md): one request frame ('Q'),
// decoded by `decode`, a pure function the fuzzer drives (Fuzz/GatekeeperRequest.swift).
// Nothing in a request is trusted: the scope comes from the kernel, the policy from
// root's files, and every gate box must match a key the gatekeeper derives for the
// identity and flags it names, so a lie about either only fails to open.
import KeygateCore

package struct GateRequest: Sendable, Equatable {
    package enum Operation: UInt8, Sendable {
        /// The gate public keys for one item (presence, current set, device), after checking
        /// the class key the client will seal to against the gatekeeper's seal on it.
        case keys = 1
        /// The key shares of one item's gate boxes, if the item's policy holds now.
        case open = 2
        /// A PAM authentication through the keychain's service (an unlock), recorded for
        /// this scope; seals the class public keys sent along.
        case authenticate = 3
        /// Migration from 1.x: the device-bound class seed of a this-device-only class.
        case legacyClassSeed = 4
        /// A user-presence check for an item whose policy asks more than it was sealed with:
        /// the item's service, window and scope, no box.
        case presence = 5
        /// Forget this user's authentications: this scope's (`keygate lock`), or with the
        /// `all` flag every scope's and every handle (`keygate lock --all`, like sudo -K).
        case forget = 6
        /// Seal the class public keys sent, once this scope authenticated within the last minute
        /// (else through PAM): the unlock that just opened the master key did.
        case certify = 7
        /// Which of an item's boxes name a key the gatekeeper no longer derives for it (an item
        /// invalidated by a password change, or sealed on another host). No prompt, no share.
        case check = 8
        /// The user's lockout and failed attempts (`keygate status`, `doctor`). No prompt.
        case status = 9
        /// `keygate validate` (sudo -v): the keychain's presence window in this scope starts again
        /// from now when an authentication in it is still fresh; else (or with `fresh`) PAM, recorded
        /// as presence for this scope. No box, no share.
        case validate = 10
        /// The enrolled set's domain state (a keyed hash of root's digest of the user's prints,
        /// which it does not reveal) and the biometric lockout (LAContext). No prompt. A client of
        /// an older release never sends it, so it never meets the result fields it adds.
        case fingerprintState = 11
        /// After a password unlock in this scope (within the last minute): a new finger-unlock
        /// pair for the user (FingerUnlockKey); the result's `seed` is its public key (empty when
        /// the policy or a missing enrolled finger turns it off).
        case fingerUnlockArm = 12
        /// A finger reopens the locked keychain: `seed` carries the master key sealed to the
        /// finger-unlock pair; after a match within the window, the result's `seed` is the master key.
        case fingerUnlock = 13
    }

    package struct Flags: OptionSet, Sendable, Equatable {
        package let rawValue: UInt8
        package init(rawValue: UInt8) { self.rawValue = rawValue }
        /// Never prompt: fail with interaction-not-allowed instead.
        package static let noPrompt = Flags(rawValue: 1)
        /// Authenticate even when a record in the window would do (the client needs the password).
        package static let fresh = Flags(rawValue: 2)
        /// Issue an authentication-context handle (LAContext) for later opens.
        package static let issueHandle = Flags(rawValue: 4)
        /// forget: every scope, not only the caller's.
        package static let all = Flags(rawValue: 8)
        /// certify only, from root only: for the user `subjectUID` names, not the caller (the host
        /// protector's passwordless keychains, HostProtectorAdmin). The uid follows the request.
        package static let forUser = Flags(rawValue: 16)
        /// authenticate: a finger through the biometric stack, not the password (LAContext's
        /// deviceOwnerAuthenticationWithBiometrics).
        package static let biometric = Flags(rawValue: 32)
        /// open, presence, validate, authenticate: the password this request's PAM conversation
        /// takes also opens the keychain. Once PAM took a typed password in this very request, the
        /// gatekeeper seals the class public keys sent (as `certify` would) and arms the finger
        /// unlock (as `fingerUnlockArm` would, its public key in the result's `seed`), so an unlock
        /// is one run of the helper. A request answered from a window or a handle gets neither.
        package static let unlocking = Flags(rawValue: 64)
    }

    /// One sealed gate box of an item: its slot kind, the key id it names, the 80 sealed bytes.
    package struct Box: Sendable, Equatable {
        package var kind: GateKind
        package var keyID: [UInt8]
        package var sealed: [UInt8]

        package init(kind: GateKind, keyID: [UInt8], sealed: [UInt8]) {
            self.kind = kind
            self.keyID = keyID
            self.sealed = sealed
        }
    }

    /// A class public key the client seals to, with the gatekeeper's seal on it (empty when none).
    package struct ClassKey: Sendable, Equatable {
        package var accessibility: Accessibility
        package var publicKey: [UInt8]
        package var seal: [UInt8]

        package init(accessibility: Accessibility, publicKey: [UInt8], seal: [UInt8]) {
            self.accessibility = accessibility
            self.publicKey = publicKey
            self.seal = seal
        }
    }

    package static let version: UInt8 = 1
    package static let maxReasonBytes = 1024
    package static let maxFieldBytes = 4096
    package static let handleBytes = 32
    package static let sealBytes = PublicKeys.sealBytes
    /// fingerUnlock's sealed master key: 32 bytes in a sealed box.
    package static let sealedMasterKeyBytes = 80

    package var operation: Operation
    package var flags: Flags = []
    /// Apple's SecAccessControlCreateFlags bits of the item (part of its gate keys' derivation).
    package var accessControl: UInt32 = 0
    package var identity: ItemIdentity?
    package var reason: String = ""
    package var handle: [UInt8] = []
    package var classKeys: [ClassKey] = []
    package var boxes: [Box] = []
    /// legacyClassSeed: the master-derived seed of the class (32 bytes).
    package var seed: [UInt8] = []
    /// issueHandle: how long the authentication context wants its handle (the gatekeeper caps it).
    package var handleSeconds: UInt32 = 0
    /// forUser: whose class keys root asks to have sealed. On the wire only with the flag, last,
    /// so every request an older client sends is byte for byte what it was.
    package var subjectUID: UInt32? = nil

    package init(operation: Operation, flags: Flags = [], accessControl: UInt32 = 0, identity: ItemIdentity? = nil,
                 reason: String = "", handle: [UInt8] = [], classKeys: [ClassKey] = [], boxes: [Box] = [],
                 seed: [UInt8] = [], handleSeconds: UInt32 = 0, subjectUID: UInt32? = nil) {
        self.operation = operation
        self.flags = flags
        self.accessControl = accessControl
        self.identity = identity
        self.reason = reason
        self.handle = handle
        self.classKeys = classKeys
        self.boxes = boxes
        self.seed = seed
        self.handleSeconds = handleSeconds
        self.subjectUID = subjectUID
    }

    /// True for the requests the gatekeeper's daemon answers (no prompt can be needed): the
    /// client sends only those to its socket (GateDaemonLink), the daemon refuses the rest.
    package var daemonAnswers: Bool {
        switch operation {
        case .open, .presence, .check, .keys, .status: return !flags.contains(.fresh) && !flags.contains(.unlocking)
        // fingerprintState reads fprintd's storage, which the helper reaches the same way in a test session.
        case .authenticate, .legacyClassSeed, .forget, .certify, .validate, .fingerprintState, .fingerUnlockArm, .fingerUnlock:
            return false
        }
    }

    // MARK: Encoding

    package func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(UInt8(ascii: "Q"))
        w.u8(Self.version)
        w.u8(operation.rawValue)
        var flagBits = flags
        if subjectUID == nil { flagBits.remove(.forUser) } else { flagBits.insert(.forUser) }
        w.u8(flagBits.rawValue)
        w.u32(accessControl)
        if let identity {
            w.u8(1)
            GateIdentityCodec.write(identity, to: &w)
        } else {
            w.u8(0)
        }
        w.string(GateWire.prefix(reason, maxBytes: Self.maxReasonBytes))
        w.tiny(handle)
        w.u8(UInt8(classKeys.count))
        for key in classKeys {
            w.u8(key.accessibility.blobCode)
            w.raw(key.publicKey)
            w.tiny(key.seal)
        }
        w.u8(UInt8(boxes.count))
        for box in boxes {
            w.u8(box.kind.rawValue)
            w.raw(box.keyID)
            w.raw(box.sealed)
        }
        w.tiny(seed)
        w.u32(handleSeconds)
        if let subjectUID { w.u32(subjectUID) }
        return w.bytes
    }

    /// Decodes one request frame. Throws GateWireError for anything malformed, oversized,
    /// unknown or trailing; never traps.
    package static func decode(_ frame: [UInt8]) throws -> GateRequest {
        var r = ByteReader(frame)
        guard try r.u8() == UInt8(ascii: "Q") else { throw GateWireError.malformed("not a request frame") }
        guard try r.u8() == version else { throw GateWireError.malformed("a request of another version") }
        guard let operation = Operation(rawValue: try r.u8()) else { throw GateWireError.malformed("an unknown operation") }
        let flagBits = try r.u8()
        guard flagBits & ~UInt8(127) == 0 else { throw GateWireError.malformed("unknown flags") }
        var request = GateRequest(operation: operation, flags: Flags(rawValue: flagBits))
        request.accessControl = try r.u32()
        switch try r.u8() {
        case 0: request.identity = nil
        case 1: request.identity = try GateIdentityCodec.read(&r)
        default: throw GateWireError.malformed("a bad identity marker")
        }
        request.reason = try r.string(max: maxReasonBytes)
        request.handle = try r.tiny()
        guard request.handle.isEmpty || request.handle.count == handleBytes else {
            throw GateWireError.malformed("a handle of \(request.handle.count) bytes")
        }
        let keyCount = Int(try r.u8())
        guard keyCount <= Accessibility.allCases.count else { throw GateWireError.malformed("too many class keys") }
        for _ in 0..<keyCount {
            guard let accessibility = Accessibility(blobCode: try r.u8()) else {
                throw GateWireError.malformed("an unknown accessibility class")
            }
            let publicKey = try r.raw(BoxKeyPair.publicKeyBytes)
            let seal = try r.tiny()
            guard seal.isEmpty || seal.count == sealBytes else { throw GateWireError.malformed("a seal of \(seal.count) bytes") }
            request.classKeys.append(ClassKey(accessibility: accessibility, publicKey: publicKey, seal: seal))
        }
        let boxCount = Int(try r.u8())
        guard boxCount <= GatedBlob.maxGates + 1 else { throw GateWireError.malformed("too many boxes") }
        for _ in 0..<boxCount {
            guard let kind = GateKind(rawValue: try r.u8()), kind != .accessClass else {
                throw GateWireError.malformed("a box of an unknown kind")
            }
            request.boxes.append(Box(kind: kind, keyID: try r.raw(BoxKeyPair.keyIDBytes), sealed: try r.raw(GatedBlob.boxBytes)))
        }
        request.seed = try r.tiny()
        guard request.seed.isEmpty || request.seed.count == BoxKeyPair.seedBytes
                || (operation == .fingerUnlock && request.seed.count == sealedMasterKeyBytes) else {
            throw GateWireError.malformed("a seed of \(request.seed.count) bytes")
        }
        request.handleSeconds = try r.u32()
        if request.flags.contains(.forUser) {
            guard operation == .certify else { throw GateWireError.malformed("another user named outside certify") }
            request.subjectUID = try r.u32()
        }
        guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes after the request") }
        if [.keys, .open, .presence, .check].contains(operation), request.identity == nil {
            throw GateWireError.malformed("an item operation without an item")
        }
        return request
    }
}

/// An item identity on the wire: its class, then every primary-key field.
package enum GateIdentityCodec {
    package static func write(_ identity: ItemIdentity, to w: inout ByteWriter) {
        w.string(identity.itemClass.rawValue)
        w.string(identity.service)
        w.string(identity.account)
        w.string(identity.server)
        w.string(identity.protocol?.rawValue ?? "")
        w.u16(identity.port)
        w.string(identity.path)
        w.string(identity.securityDomain)
        w.string(identity.authenticationType?.rawValue ?? "")
    }

    package static func read(_ r: inout ByteReader) throws -> ItemIdentity {
        let max = GateRequest.maxFieldBytes
        guard let itemClass = ItemClass(rawValue: try r.string(max: 64)) else {
            throw GateWireError.malformed("an unknown item class")
        }
        let service = try r.string(max: max), account = try r.string(max: max), server = try r.string(max: max)
        let protocolText = try r.string(max: 64)
        let port = try r.u16()
        let path = try r.string(max: max), domain = try r.string(max: max)
        let authText = try r.string(max: 64)
        let proto: InternetProtocol? = protocolText.isEmpty ? nil : InternetProtocol(rawValue: protocolText)
        let auth: AuthenticationType? = authText.isEmpty ? nil : AuthenticationType(rawValue: authText)
        return ItemIdentity(itemClass: itemClass, service: service, account: account, server: server, protocol: proto,
                            port: port, path: path, securityDomain: domain, authenticationType: auth)
    }
}
