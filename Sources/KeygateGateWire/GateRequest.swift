// What a client asks keygate-gatekeeper (docs/GATEKEEPER.md): one request frame ('Q').
// A request is one case per operation (`Call`), each with the fields that operation takes
// and no other, and the one wish every operation shares (`noPrompt`). The bytes are the
// version-1 layout (GateRequestLayout: every field in one order), so the frame a client
// sends is the same in every release; `decode` is a pure function the fuzzer drives
// (Fuzz/GatekeeperRequest.swift) and refuses a field the operation does not take, so each
// request has exactly one encoding. Nothing in a request is trusted: the scope comes from
// the kernel, the policy from root's files, and every gate box must match a key the
// gatekeeper derives for the identity and flags it names, so a lie about either only fails
// to open. A new operation is a new case and a new number; a new field of one operation is
// a field of its case, written where the layout has room (GateRequestLayout).
import KeygateCore

package struct GateRequest: Sendable, Equatable {
    /// What is asked, with the fields that operation takes.
    package var call: Call
    /// Never prompt: fail with interaction-not-allowed instead. Operations that never prompt ignore it.
    package var noPrompt: Bool

    package init(_ call: Call, noPrompt: Bool = false) {
        self.call = call
        self.noPrompt = noPrompt
    }

    package enum Call: Sendable, Equatable {
        /// 1. The gate public keys for one item (presence, current set, device), after checking
        /// the class keys the client will seal to against the gatekeeper's seals on them.
        case keys(Item, classKeys: [ClassKey])
        /// 2. The key shares of one item's gate boxes, if the item's policy holds now (and, when
        /// its password also opens the keychain, what `unlocking` settles: Presence).
        case open(Item, boxes: [Box], Presence)
        /// 3. A PAM authentication through the keychain's service (an unlock), recorded for this
        /// scope; seals the class public keys sent along. LAContext's evaluatePolicy too.
        case authenticate(Authentication)
        /// 4. Migration from 1.x: the device-bound class seed of a this-device-only class, from its
        /// master-derived seed (32 bytes).
        case legacyClassSeed(seed: [UInt8])
        /// 5. A user-presence check for an item whose policy asks more than it was sealed with: the
        /// item's service, window and scope, no box.
        case presence(Item, Presence)
        /// 6. Forget this user's authentications: this scope's (`keygate lock`), or every scope's
        /// and every handle (`all`: `keygate lock --all`, like sudo -K).
        case forget(all: Bool)
        /// 7. Seal the class public keys sent, once this scope authenticated within the last minute
        /// (else through PAM); or, from root only, for another user with no authentication.
        case certify(Certification)
        /// 8. Which of an item's boxes name a key the gatekeeper no longer derives for it. No share.
        case check(Item, boxes: [Box])
        /// 9. The user's lockout and failed attempts (`keygate status`, `doctor`).
        case status
        /// 10. `keygate validate` (sudo -v): extends this scope's windows, or authenticates.
        case validate(Validation)
        /// 11. The enrolled set's domain state and the biometric lockout (LAContext).
        case fingerprintState
        /// 12. After a password within the last minute: a new finger-unlock pair (FingerUnlockKey).
        case fingerUnlockArm
        /// 13. A finger reopens the locked keychain: the master key sealed to the finger-unlock pair.
        case fingerUnlock(FingerUnlock)
    }

    /// The operation's number on the wire.
    package enum Operation: UInt8, Sendable, CaseIterable {
        case keys = 1, open, authenticate, legacyClassSeed, presence, forget, certify, check, status, validate,
             fingerprintState, fingerUnlockArm, fingerUnlock
    }

    /// An item: its identity and Apple's SecAccessControlCreateFlags bits (both part of its gate
    /// keys' derivation).
    package struct Item: Sendable, Equatable {
        package var identity: ItemIdentity
        package var accessControl: UInt32
        package init(_ identity: ItemIdentity, accessControl: UInt32) {
            self.identity = identity
            self.accessControl = accessControl
        }
    }

    /// What a presence check (open, presence) carries besides the item.
    package struct Presence: Sendable, Equatable {
        /// Shown with the prompt (Touch ID's localizedReason).
        package var reason: String
        /// Authenticate even when a record in the window would do (the client needs the password).
        package var fresh: Bool
        package var context: Context
        /// The password this check takes also opens the keychain: the class public keys to seal
        /// (Unlocking); nil: a check only.
        package var unlocking: [ClassKey]?
        /// A presence that is fresh and leaves no trace (keygate-secret-service: the gatekeeper sees
        /// the daemon, never the client it asks for, so no record may serve or outlive this one
        /// read): PAM or fprintd runs as the item's flags say, its attempts counted and the lockout
        /// applied as always, but no authentication record or handle is read, and none is written.
        /// It takes no `fresh` (it reads no window to skip), no handle, no wish for one and no
        /// `unlocking` (the keychain is open before an item is asked for). On the wire: flag 128.
        package var unrecorded: Bool
        package init(reason: String = "", fresh: Bool = false, context: Context = Context(), unlocking: [ClassKey]? = nil,
                     unrecorded: Bool = false) {
            self.reason = reason
            self.fresh = fresh
            self.context = context
            self.unlocking = unlocking
            self.unrecorded = unrecorded
        }

        /// What an unrecorded presence may not carry (nil: nothing): each would read or leave a record.
        var unrecordedConflict: String? {
            guard unrecorded else { return nil }
            if fresh { return "fresh (it reads no window to skip)" }
            if !context.handle.isEmpty { return "a handle" }
            if context.issueHandleSeconds != nil { return "a wish for a handle" }
            if unlocking != nil { return "unlocking keys" }
            return nil
        }
    }

    /// `unlocking` (open, presence, validate, authenticate): the password this request's PAM
    /// conversation takes also opens the keychain. Once PAM took a typed password in this very
    /// request (never a finger, a window or a handle), the gatekeeper seals the class public keys
    /// sent (as `certify` would) and arms the finger unlock (as `fingerUnlockArm` would), and the
    /// answer carries both (GateAnswer.Settled), so an unlock is one run of the helper. It is a real
    /// authentication in that run, so certify's and fingerUnlockArm's "a password within the last
    /// minute" holds; a `validate` that only extends a window settles nothing. On the wire: flag 64,
    /// the keys in the class-key field.

    /// An authentication context's (LAContext) part: the handle it holds, or its wish for one.
    package struct Context: Sendable, Equatable {
        /// 32 bytes, or empty: no handle.
        package var handle: [UInt8]
        /// Issue a handle for later requests, valid this long (the gatekeeper caps it); nil: none.
        package var issueHandleSeconds: UInt32?
        package init(handle: [UInt8] = [], issueHandleSeconds: UInt32? = nil) {
            self.handle = handle
            self.issueHandleSeconds = issueHandleSeconds
        }
    }

    package struct Authentication: Sendable, Equatable {
        package var reason: String
        /// Sealed once PAM lets the person in (with `unlocking`, once a password was typed).
        package var classKeys: [ClassKey]
        /// A finger through the biometric stack, not the password (LAContext's
        /// deviceOwnerAuthenticationWithBiometrics); no class keys then, and no unlocking.
        package var biometric: Bool
        package var context: Context
        /// The password typed also opens the keychain (Presence.unlocking): `classKeys` are sealed only
        /// after a typed password, and the finger unlock is armed in the same run.
        package var unlocking: Bool
        package init(reason: String = "", classKeys: [ClassKey] = [], biometric: Bool = false, context: Context = Context(),
                     unlocking: Bool = false) {
            self.reason = reason
            self.classKeys = classKeys
            self.biometric = biometric
            self.context = context
            self.unlocking = unlocking
        }
    }

    package struct Certification: Sendable, Equatable {
        package var classKeys: [ClassKey]
        package var reason: String
        /// Root only: the user whose class keys are sealed (the host protector's passwordless
        /// keychains, HostProtectorAdmin); nil: the caller.
        package var subjectUID: UInt32?
        package init(classKeys: [ClassKey], reason: String = "", subjectUID: UInt32? = nil) {
            self.classKeys = classKeys
            self.reason = reason
            self.subjectUID = subjectUID
        }
    }

    package struct Validation: Sendable, Equatable {
        package var reason: String
        /// Authenticate even when the window is open (the client needs the password to open a locked keychain).
        package var fresh: Bool
        /// The password typed also opens the keychain: the class public keys to seal (Presence.unlocking).
        package var unlocking: [ClassKey]?
        package init(reason: String = "", fresh: Bool = false, unlocking: [ClassKey]? = nil) {
            self.reason = reason
            self.fresh = fresh
            self.unlocking = unlocking
        }
    }

    package struct FingerUnlock: Sendable, Equatable {
        /// The master key sealed to the finger-unlock pair: `sealedMasterKeyBytes`.
        package var sealedMasterKey: [UInt8]
        package var reason: String
        package init(sealedMasterKey: [UInt8], reason: String = "") {
            self.sealedMasterKey = sealedMasterKey
            self.reason = reason
        }
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

    package var operation: Operation {
        switch call {
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

    /// The item an item operation names (keys, open, presence, check).
    package var item: Item? {
        switch call {
        case .keys(let item, _), .open(let item, _, _), .presence(let item, _), .check(let item, _): return item
        default: return nil
        }
    }

    /// The class keys an `unlocking` request sends (nil: not one; Presence.unlocking).
    package var unlocking: [ClassKey]? {
        switch call {
        case .open(_, _, let presence), .presence(_, let presence): return presence.unlocking
        case .validate(let validation): return validation.unlocking
        case .authenticate(let authentication): return authentication.unlocking ? authentication.classKeys : nil
        default: return nil
        }
    }

    /// True for the requests the gatekeeper's daemon answers (no prompt can be needed, nothing to
    /// settle for an unlock): the client sends only those to its socket (GateDaemonLink), the
    /// daemon refuses the rest.
    package var daemonAnswers: Bool {
        switch call {
        // An unrecorded presence always runs PAM or fprintd: only the helper can ask.
        case .open(_, _, let presence), .presence(_, let presence):
            return !presence.fresh && !presence.unrecorded && presence.unlocking == nil
        case .check, .keys, .status: return true
        // fingerprintState reads fprintd's storage, which the helper reaches the same way in a test session.
        case .authenticate, .legacyClassSeed, .forget, .certify, .validate, .fingerprintState, .fingerUnlockArm, .fingerUnlock:
            return false
        }
    }

    // MARK: Encoding

    package func encoded() -> [UInt8] { GateRequestLayout(self).encoded() }

    /// Decodes one request frame. Throws GateWireError for anything malformed, oversized,
    /// unknown, trailing, or a field the operation does not take; never traps.
    package static func decode(_ frame: [UInt8]) throws -> GateRequest {
        try GateRequestLayout.decode(frame).request()
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
