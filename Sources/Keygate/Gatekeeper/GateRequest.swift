// What a client asks keygate-gatekeeper (docs/GATEKEEPER.md): one request frame ('Q'),
// decoded by `decode`, a pure function the fuzzer drives (Fuzz/GatekeeperRequest.swift).
// Nothing in a request is trusted: the scope comes from the kernel, the policy from
// root's files, and every gate box must match a key the gatekeeper derives for the
// identity and flags it names, so a lie about either only fails to open.

struct GateRequest: Sendable, Equatable {
    enum Operation: UInt8, Sendable {
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
        /// The enrolled set's domain state (a keyed hash of root's digest of the user's prints,
        /// which it does not reveal) and the biometric lockout (LAContext). No prompt. A client of
        /// an older release never sends it, so it never meets the result fields it adds.
        case fingerprintState = 10
        /// After a password unlock in this scope (within the last minute): a new finger-unlock
        /// pair for the user (FingerUnlockKey); the result's `seed` is its public key (empty when
        /// the policy or a missing enrolled finger turns it off).
        case fingerUnlockArm = 11
        /// A finger reopens the locked keychain: `seed` carries the master key sealed to the
        /// finger-unlock pair; after a match within the window, the result's `seed` is the master key.
        case fingerUnlock = 12
    }

    struct Flags: OptionSet, Sendable, Equatable {
        let rawValue: UInt8
        /// Never prompt: fail with interaction-not-allowed instead.
        static let noPrompt = Flags(rawValue: 1)
        /// Authenticate even when a record in the window would do (the client needs the password).
        static let fresh = Flags(rawValue: 2)
        /// Issue an authentication-context handle (LAContext) for later opens.
        static let issueHandle = Flags(rawValue: 4)
        /// forget: every scope, not only the caller's.
        static let all = Flags(rawValue: 8)
        /// authenticate: a finger through the biometric stack, not the password (LAContext's
        /// deviceOwnerAuthenticationWithBiometrics).
        static let biometric = Flags(rawValue: 16)
    }

    /// One sealed gate box of an item: its slot kind, the key id it names, the 80 sealed bytes.
    struct Box: Sendable, Equatable {
        var kind: GateKind
        var keyID: [UInt8]
        var sealed: [UInt8]
    }

    /// A class public key the client seals to, with the gatekeeper's seal on it (empty when none).
    struct ClassKey: Sendable, Equatable {
        var accessibility: Accessibility
        var publicKey: [UInt8]
        var seal: [UInt8]
    }

    static let version: UInt8 = 1
    static let maxReasonBytes = 1024
    static let maxFieldBytes = 4096
    static let handleBytes = 32
    static let sealBytes = GateSecrets.sealBytes
    /// fingerUnlock's sealed master key: 32 bytes in a sealed box.
    static let sealedMasterKeyBytes = 80

    var operation: Operation
    var flags: Flags = []
    /// Apple's SecAccessControlCreateFlags bits of the item (part of its gate keys' derivation).
    var accessControl: UInt32 = 0
    var identity: ItemIdentity?
    var reason: String = ""
    var handle: [UInt8] = []
    var classKeys: [ClassKey] = []
    var boxes: [Box] = []
    /// legacyClassSeed: the master-derived seed of the class (32 bytes).
    var seed: [UInt8] = []
    /// issueHandle: how long the authentication context wants its handle (the gatekeeper caps it).
    var handleSeconds: UInt32 = 0

    // MARK: Encoding

    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(UInt8(ascii: "Q"))
        w.u8(Self.version)
        w.u8(operation.rawValue)
        w.u8(flags.rawValue)
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
        return w.bytes
    }

    /// Decodes one request frame. Throws GateWireError for anything malformed, oversized,
    /// unknown or trailing; never traps.
    static func decode(_ frame: [UInt8]) throws -> GateRequest {
        var r = ByteReader(frame)
        guard try r.u8() == UInt8(ascii: "Q") else { throw GateWireError.malformed("not a request frame") }
        guard try r.u8() == version else { throw GateWireError.malformed("a request of another version") }
        guard let operation = Operation(rawValue: try r.u8()) else { throw GateWireError.malformed("an unknown operation") }
        let flagBits = try r.u8()
        guard flagBits & ~UInt8(31) == 0 else { throw GateWireError.malformed("unknown flags") }
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
        guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes after the request") }
        if [.keys, .open, .presence, .check].contains(operation), request.identity == nil {
            throw GateWireError.malformed("an item operation without an item")
        }
        return request
    }
}

/// An item identity on the wire: its class, then every primary-key field.
enum GateIdentityCodec {
    static func write(_ identity: ItemIdentity, to w: inout ByteWriter) {
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

    static func read(_ r: inout ByteReader) throws -> ItemIdentity {
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
