// The keychain's side of the gatekeeper (docs/GATEKEEPER.md): what a read, a write, an
// unlock and a lock ask keygate-gatekeeper, in the keychain's terms. The gate keys
// themselves never come here: a write gets the item's gate public keys, a read gets the
// shares of the item's own boxes, an unlock gets the password the person typed into the
// gatekeeper's PAM conversation (to open the master key) and the gatekeeper's seals on
// the class public keys. An authentication context (LAContext) holds a handle, not a key.
// Delegates the process and the pipe to GateClient.
internal import KeygateGateWire

struct GateAccess: Sendable {
    let prompter: any Prompter
    let authContext: AuthenticationContext?
    /// The edge's environment, passed down to the client.
    let environment: KeygateEnvironment
    /// Writes the gatekeeper's audit events into this process's trail (KeyUnlocker.audit).
    var audit: @Sendable (AuditEvent, String, String) -> Void = { _, _, _ in }

    private var client: GateClient { GateClient(prompter: prompter, environment: environment, onAudit: audit) }

    /// What an authentication gave: the password typed (nil when none was, or none was asked),
    /// and, when its password also opens the keychain (`unlocking`), what the same run of the
    /// gatekeeper settled: the seals on the class keys `sent`, and the finger unlock's public
    /// key (empty: the finger unlock is off; nil: nothing was armed in this run).
    struct Grant {
        var password: SecureBytes?
        var seals: [(accessibility: Accessibility, seal: [UInt8])] = []
        var sent: [GateRequest.ClassKey] = []
        var fingerKey: [UInt8]?

        /// The password typed: the keys are wrapped by it, so a stack that let the person in
        /// without one (pam_permit, a fingerprint, a smart card) leaves nothing to open them with.
        func typedPassword(service: String) throws -> SecureBytes {
            guard let password, password.count > 0 else {
                throw KeychainError.authFailed("""
                    PAM service '\(service)' accepted you without a typed password, but the keychain opens only with your password: \
                    make that service ask for it (see pam.d/keygate)
                    """)
            }
            return password
        }
    }

    /// The grant of a reply; `sent`: the class keys an `unlocking` request carried (nil: not one).
    /// The gatekeeper settles an unlock only after a password typed in that request, the one this
    /// client relayed: without it, nothing was sealed or armed.
    private static func grant(_ reply: GateClient.Reply, sent: [GateRequest.ClassKey]?) -> Grant {
        var grant = Grant(password: reply.password)
        guard let sent, reply.password != nil else { return grant }
        let settled = reply.result.settled
        grant.seals = settled.seals.map { ($0.accessibility, $0.seal) }
        grant.sent = sent
        grant.fingerKey = settled.fingerUnlockKey
        return grant
    }

    /// The gate public keys to seal one item to: presence or current set for its flags, and the
    /// device key for a this-device-only class. The class key it travels with must carry the
    /// gatekeeper's seal; a substituted one is refused and nothing is sealed.
    func recipients(for identity: ItemIdentity, accessControl: UInt32, classKey: GateRequest.ClassKey) throws -> [GateRecipient] {
        let request = GateRequest(.keys(.init(identity, accessControl: accessControl), classKeys: [classKey]))
        guard case .keys(let keys) = try client.call(request).result else { throw Self.unexpected() }
        return keys.map { GateRecipient(kind: $0.kind, publicKey: $0.key) }
    }

    /// The shares of the given gate slots of one item's blob, once the item's policy holds, by
    /// gate slot index (nil for a slot not asked for). With `fresh`, the person authenticates
    /// even inside a window (the caller needs the password). `meanwhile` runs while the
    /// gatekeeper's daemon decides (GateClient).
    /// `unlocking`: with `fresh`, the class keys to seal when the password typed also opens the keychain.
    /// `unrecorded`: the person authenticates now and no record or handle is read or left (the
    /// Secret Service's door, GateRequest.Presence.unrecorded); it takes no `fresh` or `unlocking`.
    func shares(of blob: [UInt8], header: GatedBlob.Header, slots: [Int], identity: ItemIdentity, reason: String,
                fresh: Bool, unlocking: [GateRequest.ClassKey]? = nil, unrecorded: Bool = false,
                meanwhile: () throws -> Void = {}) throws -> (shares: [SecureBytes?], grant: Grant) {
        let boxes = slots.map { index in
            GateRequest.Box(kind: header.gateSlots[index].kind, keyID: header.gateSlots[index].keyID,
                            sealed: GatedBlob.gateBox(blob, header: header, index: index))
        }
        let item = GateRequest.Item(identity, accessControl: header.accessControl)
        let sent = fresh ? unlocking : nil
        let reply: GateClient.Reply
        if unrecorded {
            // No authentication context's handle: an unrecorded presence reads none and issues none.
            reply = try client.call(GateRequest(.open(item, boxes: boxes, .init(reason: reason, unrecorded: true))), meanwhile: meanwhile)
        } else {
            reply = try callWithContext({ .open(item, boxes: boxes, .init(reason: reason, fresh: fresh, context: $0, unlocking: sent)) },
                                        meanwhile: meanwhile)
        }
        guard case .open(let opened, _, _) = reply.result else { throw Self.unexpected() }
        // An array, not a dictionary keyed by Int: a read pays no Hashable conformance lookup.
        var shares = [SecureBytes?](repeating: nil, count: header.gateSlots.count)
        for share in opened where Int(share.index) < slots.count && slots[Int(share.index)] < shares.count {
            var bytes = share.share
            shares[slots[Int(share.index)]] = try SecureBytes(consuming: &bytes)
        }
        return (shares, Self.grant(reply, sent: sent))
    }

    /// The kinds of the item's gate slots whose keys the gatekeeper no longer holds (no prompt).
    func invalidSlots(of blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity) throws -> [GateKind] {
        guard case .check(let invalid) = try client.call(Self.check(blob, header, identity)).result else { throw Self.unexpected() }
        return Self.kinds(invalid, header)
    }

    /// How many `check` requests `invalidSlots(of: items)` keeps waiting on the daemon at once.
    static let checksInFlight = 8

    /// `invalidSlots` of many items (nil where it could not be told), with up to
    /// `checksInFlight` requests waiting on the gatekeeper's daemon at once: this process
    /// prepares and reads the next ones while the daemon decides (one at a time, a list of
    /// 1,000 gated items spent about a quarter of its time in these round trips). A request
    /// the daemon does not answer goes through `invalidSlots(of:header:identity:)`, the helper.
    func invalidSlots(of items: [(blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity)]) -> [[GateKind]?] {
        var out = [[GateKind]?](repeating: nil, count: items.count)
        var waiting: [(index: Int, pending: GateDaemonLink.Pending)] = []
        var next = 0   // the oldest of `waiting` not yet answered
        func settle(_ index: Int, _ answer: GateAnswer?) {
            let item = items[index]
            if case .check(let invalid)? = answer {
                out[index] = Self.kinds(invalid, item.header)
            } else {
                out[index] = try? invalidSlots(of: item.blob, header: item.header, identity: item.identity)   // try?: nil is "could not be told", shown as such
            }
        }
        for index in items.indices {
            guard let pending = GateDaemonLink.send(Self.check(items[index].blob, items[index].header, items[index].identity),
                                                      environment: environment) else {
                settle(index, nil)
                continue
            }
            waiting.append((index, pending))
            if waiting.count - next >= Self.checksInFlight {
                settle(waiting[next].index, waiting[next].pending.answer())
                next += 1
            }
        }
        while next < waiting.count {
            settle(waiting[next].index, waiting[next].pending.answer())
            next += 1
        }
        return out
    }

    /// The `check` request of one item's blob: every gate slot's box.
    private static func check(_ blob: [UInt8], _ header: GatedBlob.Header, _ identity: ItemIdentity) -> GateRequest {
        let boxes = header.gateSlots.indices.map { index in
            GateRequest.Box(kind: header.gateSlots[index].kind, keyID: header.gateSlots[index].keyID,
                            sealed: GatedBlob.gateBox(blob, header: header, index: index))
        }
        return GateRequest(.check(.init(identity, accessControl: header.accessControl), boxes: boxes))
    }

    /// The kinds of the slots a `check` answered as invalid, by index.
    private static func kinds(_ invalid: [UInt8], _ header: GatedBlob.Header) -> [GateKind] {
        invalid.compactMap { Int($0) < header.gateSlots.count ? header.gateSlots[Int($0)].kind : nil }
    }

    /// A presence check for an item whose policy asks for more than it was sealed with. With
    /// `fresh`, the person authenticates even inside a window, and the password typed is returned.
    /// `unrecorded`: as `shares`'.
    func requirePresence(for identity: ItemIdentity, constraints: AccessControl, reason: String, fresh: Bool,
                         unlocking: [GateRequest.ClassKey]? = nil, unrecorded: Bool = false) throws -> Grant {
        let item = GateRequest.Item(identity, accessControl: constraints.rawValue)
        if unrecorded {
            guard case .presence = try client.call(GateRequest(.presence(item, .init(reason: reason, unrecorded: true)))).result else {
                throw Self.unexpected()
            }
            return Grant()
        }
        let sent = fresh ? unlocking : nil
        let reply = try callWithContext { .presence(item, .init(reason: reason, fresh: fresh, context: $0, unlocking: sent)) }
        guard case .presence = reply.result else { throw Self.unexpected() }
        return Self.grant(reply, sent: sent)
    }

    /// An unlock through the keychain's PAM service: returns the password typed (nil when the
    /// stack let the person in without one), and the gatekeeper's seals on `classKeys`.
    /// `biometric`: a finger through the biometric stack instead (LAContext's biometric policy).
    /// `unlocking`: the class keys to seal, and the finger unlock armed, when the password opens the keychain.
    func authenticate(reason: String, biometric: Bool = false, unlocking: [GateRequest.ClassKey]? = nil) throws -> Grant {
        let sent = biometric ? nil : unlocking
        let reply = try callWithContext {
            .authenticate(.init(reason: reason, classKeys: sent ?? [], biometric: biometric, context: $0, unlocking: sent != nil))
        }
        guard case .authenticate = reply.result else { throw Self.unexpected() }
        return Self.grant(reply, sent: sent)
    }

    /// `keygate validate` (sudo -v): the gatekeeper extends the presence window of this scope, or
    /// authenticates (always with `fresh`) and returns the password typed, if any.
    func validate(reason: String, fresh: Bool, unlocking: [GateRequest.ClassKey]? = nil) throws -> Grant {
        let sent = fresh ? unlocking : nil
        // A validate is not presence for an authentication context: it carries none of its handle.
        let reply = try callWithContext { _ in .validate(.init(reason: reason, fresh: fresh, unlocking: sent)) }
        guard case .validate = reply.result else { throw Self.unexpected() }
        return Self.grant(reply, sent: sent)
    }

    /// The gatekeeper's seals on the class public keys (after an authentication in this scope).
    func certify(_ classKeys: [GateRequest.ClassKey]) throws -> [Accessibility: [UInt8]] {
        let request = GateRequest(.certify(.init(classKeys: classKeys)), noPrompt: (try? prompter.ensureAvailable()) == nil)   // try?: a prompter that cannot ask says no prompt
        guard case .certify(let sealed) = try client.call(request).result else { throw Self.unexpected() }
        var seals: [Accessibility: [UInt8]] = [:]
        for seal in sealed { seals[seal.accessibility] = seal.seal }
        return seals
    }

    /// The class public keys of `master`, each without a seal yet.
    package static func classKeys(of master: SecureBytes) throws -> [GateRequest.ClassKey] {
        try Accessibility.allCases.map { accessibility in
            GateRequest.ClassKey(accessibility: accessibility, publicKey: try ClassKeys.keyPair(masterKey: master, for: accessibility).publicKey,
                                 seal: [])
        }
    }

    /// Forgets the authentications of this scope, or with `all` of every scope (sudo -k / -K).
    func forget(all: Bool) {
        _ = try? GateClient(prompter: prompter, environment: environment).call(GateRequest(.forget(all: all)))   // try?: the key goes from the keyring all the same; doctor reports the gatekeeper
    }

    /// The user's lockout as root's records hold it: seconds left (0: none) and the failed attempts
    /// counted since the last success. Never prompts.
    func lockoutState() throws -> (secondsLeft: UInt32, failedAttempts: UInt32) {
        guard case .status(let left, let failed) = try client.call(GateRequest(.status, noPrompt: true)).result else {
            throw Self.unexpected()
        }
        return (left, failed)
    }

    /// The enrolled set's domain state (empty with no finger) and the biometric lockout, as root
    /// keeps them. Never prompts.
    func fingerprintState() throws -> (domainState: [UInt8], biometryLockedOut: Bool) {
        guard case .fingerprintState(let state, let locked) = try client.call(GateRequest(.fingerprintState, noPrompt: true)).result else {
            throw Self.unexpected()
        }
        return (state, locked)
    }

    /// After a password unlock: the public key to seal the master key to for a finger's reopening
    /// (empty when it is off: no enrolled finger, or the policy's `finger-unlock = 0`). Never prompts.
    func armFingerUnlock() throws -> [UInt8] {
        guard case .fingerUnlockArm(let publicKey) = try client.call(GateRequest(.fingerUnlockArm, noPrompt: true)).result else {
            throw Self.unexpected()
        }
        return publicKey
    }

    /// A finger reopens the locked keychain: the master key sealed by `armFingerUnlock`'s key,
    /// opened by the gatekeeper after a match within its window.
    func fingerUnlock(_ sealed: [UInt8], reason: String) throws -> SecureBytes {
        let request = GateRequest(.fingerUnlock(.init(sealedMasterKey: sealed, reason: reason)),
                                  noPrompt: (try? prompter.ensureAvailable()) == nil)   // try?: a prompter that cannot ask says no prompt
        guard case .fingerUnlock(var bytes) = try client.call(request).result else { throw Self.unexpected() }
        return try SecureBytes(consuming: &bytes)
    }

    /// Migration from 1.x: the device-bound seed of a this-device-only class, from its master-derived seed.
    func legacyClassSeed(_ seed: SecureBytes) throws -> SecureBytes {
        let request = GateRequest(.legacyClassSeed(seed: seed.unprotectedCopy()))
        guard case .legacyClassSeed(var bytes) = try client.call(request).result else { throw Self.unexpected() }
        return try SecureBytes(consuming: &bytes)
    }

    /// Sends the context's handle (or asks for one) in the request `make` builds, and its no-prompt
    /// wish; a prompter that cannot ask turns a needed prompt into its own interaction-not-allowed error.
    private func callWithContext(_ make: (GateRequest.Context) -> GateRequest.Call,
                                 meanwhile: () throws -> Void = {}) throws -> GateClient.Reply {
        var context = GateRequest.Context()
        var noPrompt = false
        if let authContext {
            if authContext.interactionNotAllowed { noPrompt = true }
            if let handle = authContext.handle {
                context.handle = handle
            } else if !authContext.isInvalidated {
                context.issueHandleSeconds = authContext.reuseDuration
            }
        }
        var unavailable: (any Error)?
        do { try prompter.ensureAvailable() } catch {
            unavailable = error
            noPrompt = true
        }
        do {
            let reply = try client.call(GateRequest(make(context), noPrompt: noPrompt), meanwhile: meanwhile)
            if let handle = reply.result.issuedHandle, !handle.isEmpty { authContext?.remember(handle: handle) }
            return reply
        } catch let error as KeychainError where error.code == .interactionNotAllowed && authContext?.interactionNotAllowed != true {
            throw unavailable ?? error
        }
    }

    /// The gatekeeper answered another operation than the one asked (a mismatched install).
    private static func unexpected() -> KeychainError {
        .notAvailable("Keygate's gatekeeper answered another request than the one asked: reinstall keygate so that both come from one version")
    }
}
