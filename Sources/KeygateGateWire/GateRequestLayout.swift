// The bytes of a request frame, version 1 (docs/GATEKEEPER.md, "Wire format"): 'Q', the
// version, the operation, the flags, the item's access-control flags, the identity (or none),
// the reason, the handle, the class keys with their seals, the boxes, the seed, the handle's
// seconds, and, with the forUser flag only, a uid. The unlocking flag (64) puts an open's,
// presence's or validate's class keys to seal in the class-key field, as authenticate's are;
// the unrecorded flag (128) is an open's or presence's Presence.unrecorded. Every operation
// writes all of them, each empty where it takes none, so a client and a gatekeeper of
// different releases read each other's frames.
// This is the one place the layout lives: GateRequest maps each case onto it, and `request()`
// maps it back, refusing any field its operation does not take (the layout of the request it
// decodes must be the layout that request encodes to), so each request has one encoding.
import KeygateCore

struct GateRequestLayout: Equatable {
    struct Flags: OptionSet, Equatable {
        let rawValue: UInt8
        static let noPrompt = Flags(rawValue: 1)
        static let fresh = Flags(rawValue: 2)
        static let issueHandle = Flags(rawValue: 4)
        static let all = Flags(rawValue: 8)
        static let forUser = Flags(rawValue: 16)
        static let biometric = Flags(rawValue: 32)
        static let unlocking = Flags(rawValue: 64)
        static let unrecorded = Flags(rawValue: 128)
        static let known: UInt8 = 255
    }

    var operation: GateRequest.Operation
    var flags: Flags = []
    var accessControl: UInt32 = 0
    var identity: ItemIdentity?
    var reason = ""
    var handle: [UInt8] = []
    var classKeys: [GateRequest.ClassKey] = []
    var boxes: [GateRequest.Box] = []
    var seed: [UInt8] = []
    var handleSeconds: UInt32 = 0
    var subjectUID: UInt32?

    init(operation: GateRequest.Operation) { self.operation = operation }

    /// The layout of `request`.
    init(_ request: GateRequest) {
        operation = request.operation
        if request.noPrompt { flags.insert(.noPrompt) }
        func take(_ item: GateRequest.Item) {
            identity = item.identity
            accessControl = item.accessControl
        }
        func take(_ context: GateRequest.Context) {
            handle = context.handle
            if let seconds = context.issueHandleSeconds {
                flags.insert(.issueHandle)
                handleSeconds = seconds
            }
        }
        func take(unlocking keys: [GateRequest.ClassKey]?) {
            guard let keys else { return }
            flags.insert(.unlocking)
            classKeys = keys
        }
        func take(_ presence: GateRequest.Presence) {
            reason = presence.reason
            if presence.fresh { flags.insert(.fresh) }
            if presence.unrecorded { flags.insert(.unrecorded) }
            take(presence.context)
            take(unlocking: presence.unlocking)
        }
        switch request.call {
        case .keys(let item, let keys):
            take(item)
            classKeys = keys
        case .open(let item, let sent, let presence):
            take(item)
            boxes = sent
            take(presence)
        case .authenticate(let authentication):
            reason = authentication.reason
            classKeys = authentication.classKeys
            if authentication.biometric { flags.insert(.biometric) }
            if authentication.unlocking { flags.insert(.unlocking) }
            take(authentication.context)
        case .legacyClassSeed(let sent):
            seed = sent
        case .presence(let item, let presence):
            take(item)
            take(presence)
        case .forget(let everything):
            if everything { flags.insert(.all) }
        case .certify(let certification):
            classKeys = certification.classKeys
            reason = certification.reason
            if let uid = certification.subjectUID {
                flags.insert(.forUser)
                subjectUID = uid
            }
        case .check(let item, let sent):
            take(item)
            boxes = sent
        case .status, .fingerprintState, .fingerUnlockArm:
            break
        case .validate(let validation):
            reason = validation.reason
            if validation.fresh { flags.insert(.fresh) }
            take(unlocking: validation.unlocking)
        case .fingerUnlock(let unlock):
            seed = unlock.sealedMasterKey
            reason = unlock.reason
        }
    }

    /// The request this layout holds; throws when it sets a field its operation does not take.
    func request() throws -> GateRequest {
        func item() throws -> GateRequest.Item {
            guard let identity else { throw GateWireError.malformed("an item operation without an item") }
            return GateRequest.Item(identity, accessControl: accessControl)
        }
        let context = GateRequest.Context(handle: handle, issueHandleSeconds: flags.contains(.issueHandle) ? handleSeconds : nil)
        let unlocking = flags.contains(.unlocking) ? classKeys : nil
        let presence = GateRequest.Presence(reason: reason, fresh: flags.contains(.fresh), context: context, unlocking: unlocking,
                                            unrecorded: flags.contains(.unrecorded))
        let call: GateRequest.Call
        switch operation {
        case .keys: call = .keys(try item(), classKeys: classKeys)
        case .open, .presence:
            if let conflict = presence.unrecordedConflict {
                throw GateWireError.malformed("an unrecorded presence with \(conflict): it reads and leaves no record")
            }
            call = operation == .open ? .open(try item(), boxes: boxes, presence) : .presence(try item(), presence)
        case .authenticate:
            call = .authenticate(.init(reason: reason, classKeys: classKeys, biometric: flags.contains(.biometric), context: context,
                                       unlocking: flags.contains(.unlocking)))
        case .legacyClassSeed:
            guard seed.count == BoxKeyPair.seedBytes else { throw GateWireError.malformed("a 1.x seed of \(seed.count) bytes") }
            call = .legacyClassSeed(seed: seed)
        case .forget: call = .forget(all: flags.contains(.all))
        case .certify: call = .certify(.init(classKeys: classKeys, reason: reason, subjectUID: subjectUID))
        case .check: call = .check(try item(), boxes: boxes)
        case .status: call = .status
        case .validate: call = .validate(.init(reason: reason, fresh: flags.contains(.fresh), unlocking: unlocking))
        case .fingerprintState: call = .fingerprintState
        case .fingerUnlockArm: call = .fingerUnlockArm
        case .fingerUnlock:
            guard seed.count == GateRequest.sealedMasterKeyBytes else {
                throw GateWireError.malformed("a sealed master key of \(seed.count) bytes")
            }
            call = .fingerUnlock(.init(sealedMasterKey: seed, reason: reason))
        }
        let request = GateRequest(call, noPrompt: flags.contains(.noPrompt))
        guard GateRequestLayout(request) == self else {
            throw GateWireError.malformed("a field the \(operation) operation does not take")
        }
        return request
    }

    func encoded() -> [UInt8] {
        var w = ByteWriter()
        w.u8(UInt8(ascii: "Q"))
        w.u8(GateRequest.version)
        w.u8(operation.rawValue)
        w.u8(flags.rawValue)
        w.u32(accessControl)
        if let identity {
            w.u8(1)
            GateIdentityCodec.write(identity, to: &w)
        } else {
            w.u8(0)
        }
        w.string(GateWire.prefix(reason, maxBytes: GateRequest.maxReasonBytes))
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

    /// Reads the layout of one frame: sizes and counts checked, nothing about the operation yet.
    static func decode(_ frame: [UInt8]) throws -> GateRequestLayout {
        var r = ByteReader(frame)
        guard try r.u8() == UInt8(ascii: "Q") else { throw GateWireError.malformed("not a request frame") }
        guard try r.u8() == GateRequest.version else { throw GateWireError.malformed("a request of another version") }
        guard let operation = GateRequest.Operation(rawValue: try r.u8()) else { throw GateWireError.malformed("an unknown operation") }
        var layout = GateRequestLayout(operation: operation)
        let flagBits = try r.u8()
        guard flagBits & ~Flags.known == 0 else { throw GateWireError.malformed("unknown flags") }
        layout.flags = Flags(rawValue: flagBits)
        layout.accessControl = try r.u32()
        switch try r.u8() {
        case 0: layout.identity = nil
        case 1: layout.identity = try GateIdentityCodec.read(&r)
        default: throw GateWireError.malformed("a bad identity marker")
        }
        layout.reason = try r.string(max: GateRequest.maxReasonBytes)
        layout.handle = try r.tiny()
        guard layout.handle.isEmpty || layout.handle.count == GateRequest.handleBytes else {
            throw GateWireError.malformed("a handle of \(layout.handle.count) bytes")
        }
        let keyCount = Int(try r.u8())
        guard keyCount <= Accessibility.allCases.count else { throw GateWireError.malformed("too many class keys") }
        for _ in 0..<keyCount {
            guard let accessibility = Accessibility(blobCode: try r.u8()) else {
                throw GateWireError.malformed("an unknown accessibility class")
            }
            let publicKey = try r.raw(BoxKeyPair.publicKeyBytes)
            let seal = try r.tiny()
            guard seal.isEmpty || seal.count == GateRequest.sealBytes else { throw GateWireError.malformed("a seal of \(seal.count) bytes") }
            layout.classKeys.append(GateRequest.ClassKey(accessibility: accessibility, publicKey: publicKey, seal: seal))
        }
        let boxCount = Int(try r.u8())
        guard boxCount <= GatedBlob.maxGates + 1 else { throw GateWireError.malformed("too many boxes") }
        for _ in 0..<boxCount {
            guard let kind = GateKind(rawValue: try r.u8()), kind != .accessClass else {
                throw GateWireError.malformed("a box of an unknown kind")
            }
            layout.boxes.append(GateRequest.Box(kind: kind, keyID: try r.raw(BoxKeyPair.keyIDBytes), sealed: try r.raw(GatedBlob.boxBytes)))
        }
        layout.seed = try r.tiny()
        layout.handleSeconds = try r.u32()
        if layout.flags.contains(.forUser) { layout.subjectUID = try r.u32() }
        guard r.isAtEnd else { throw GateWireError.malformed("trailing bytes after the request") }
        return layout
    }
}
