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

    /// `unlocking`: the request's password also opens the keychain; `sent`, the class keys to seal.
    private static func mark(_ request: inout GateRequest, unlocking sent: [GateRequest.ClassKey]?) {
        guard let sent else { return }
        request.flags.insert(.unlocking)
        if request.classKeys.isEmpty { request.classKeys = sent }
    }

    /// The grant of a reply; `sent`: the class keys an `unlocking` request carried (nil: not one).
    private static func grant(_ reply: GateClient.Reply, sent: [GateRequest.ClassKey]?) -> Grant {
        var grant = Grant(password: reply.password)
        guard let sent, reply.password != nil else { return grant }
        grant.seals = reply.result.seals
        grant.sent = sent
        grant.fingerKey = reply.result.seed
        return grant
    }

    /// The gate public keys to seal one item to: presence or current set for its flags, and the
    /// device key for a this-device-only class. The class key it travels with must carry the
    /// gatekeeper's seal; a substituted one is refused and nothing is sealed.
    func recipients(for identity: ItemIdentity, accessControl: UInt32, classKey: GateRequest.ClassKey) throws -> [GateRecipient] {
        let request = GateRequest(operation: .keys, accessControl: accessControl, identity: identity, classKeys: [classKey])
        return try client.call(request).result.publicKeys.map { GateRecipient(kind: $0.kind, publicKey: $0.key) }
    }

    /// The shares of the given gate slots of one item's blob, once the item's policy holds, by
    /// gate slot index (nil for a slot not asked for). With `fresh`, the person authenticates
    /// even inside a window (the caller needs the password). `meanwhile` runs while the
    /// gatekeeper's daemon decides (GateClient).
    /// `unlocking`: with `fresh`, the class keys to seal when the password typed also opens the keychain.
    func shares(of blob: [UInt8], header: GatedBlob.Header, slots: [Int], identity: ItemIdentity, reason: String,
                fresh: Bool, unlocking: [GateRequest.ClassKey]? = nil,
                meanwhile: () throws -> Void = {}) throws -> (shares: [SecureBytes?], grant: Grant) {
        var request = GateRequest(operation: .open, accessControl: header.accessControl, identity: identity, reason: reason)
        request.boxes = slots.map { index in
            GateRequest.Box(kind: header.gateSlots[index].kind, keyID: header.gateSlots[index].keyID,
                            sealed: GatedBlob.gateBox(blob, header: header, index: index))
        }
        let sent = fresh ? unlocking : nil
        if fresh { request.flags.insert(.fresh) }
        Self.mark(&request, unlocking: sent)
        let reply = try callWithContext(&request, meanwhile: meanwhile)
        // An array, not a dictionary keyed by Int: a read pays no Hashable conformance lookup.
        var shares = [SecureBytes?](repeating: nil, count: header.gateSlots.count)
        for share in reply.result.shares where Int(share.index) < slots.count && slots[Int(share.index)] < shares.count {
            var bytes = share.share
            shares[slots[Int(share.index)]] = try SecureBytes(consuming: &bytes)
        }
        return (shares, Self.grant(reply, sent: sent))
    }

    /// The kinds of the item's gate slots whose keys the gatekeeper no longer holds (no prompt).
    func invalidSlots(of blob: [UInt8], header: GatedBlob.Header, identity: ItemIdentity) throws -> [GateKind] {
        Self.kinds(try client.call(Self.check(blob, header, identity)).result.invalid, header)
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
        func settle(_ index: Int, _ result: GateResult?) {
            let item = items[index]
            if let result {
                out[index] = Self.kinds(result.invalid, item.header)
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
        var request = GateRequest(operation: .check, accessControl: header.accessControl, identity: identity)
        request.boxes = header.gateSlots.indices.map { index in
            GateRequest.Box(kind: header.gateSlots[index].kind, keyID: header.gateSlots[index].keyID,
                            sealed: GatedBlob.gateBox(blob, header: header, index: index))
        }
        return request
    }

    /// The kinds of the slots a `check` answered as invalid, by index.
    private static func kinds(_ invalid: [UInt8], _ header: GatedBlob.Header) -> [GateKind] {
        invalid.compactMap { Int($0) < header.gateSlots.count ? header.gateSlots[Int($0)].kind : nil }
    }

    /// A presence check for an item whose policy asks for more than it was sealed with. With
    /// `fresh`, the person authenticates even inside a window, and the password typed is returned.
    func requirePresence(for identity: ItemIdentity, constraints: AccessControl, reason: String, fresh: Bool,
                         unlocking: [GateRequest.ClassKey]? = nil) throws -> Grant {
        var request = GateRequest(operation: .presence, accessControl: constraints.rawValue, identity: identity, reason: reason)
        let sent = fresh ? unlocking : nil
        if fresh { request.flags.insert(.fresh) }
        Self.mark(&request, unlocking: sent)
        return Self.grant(try callWithContext(&request), sent: sent)
    }

    /// An unlock through the keychain's PAM service: returns the password typed (nil when the
    /// stack let the person in without one), and the gatekeeper's seals on `classKeys`.
    /// `biometric`: a finger through the biometric stack instead (LAContext's biometric policy).
    /// `unlocking`: the class keys to seal, and the finger unlock armed, when the password opens the keychain.
    func authenticate(reason: String, biometric: Bool = false, unlocking: [GateRequest.ClassKey]? = nil) throws -> Grant {
        var request = GateRequest(operation: .authenticate, reason: reason)
        if biometric { request.flags.insert(.biometric) }
        let sent = biometric ? nil : unlocking
        Self.mark(&request, unlocking: sent)
        return Self.grant(try callWithContext(&request), sent: sent)
    }

    /// `keygate validate` (sudo -v): the gatekeeper extends the presence window of this scope, or
    /// authenticates (always with `fresh`) and returns the password typed, if any.
    func validate(reason: String, fresh: Bool, unlocking: [GateRequest.ClassKey]? = nil) throws -> Grant {
        var request = GateRequest(operation: .validate, reason: reason)
        let sent = fresh ? unlocking : nil
        if fresh { request.flags.insert(.fresh) }
        Self.mark(&request, unlocking: sent)
        return Self.grant(try callWithContext(&request), sent: sent)
    }

    /// The gatekeeper's seals on the class public keys (after an authentication in this scope).
    func certify(_ classKeys: [GateRequest.ClassKey]) throws -> [Accessibility: [UInt8]] {
        var request = GateRequest(operation: .certify, classKeys: classKeys)
        if (try? prompter.ensureAvailable()) == nil { request.flags.insert(.noPrompt) }   // try?: a prompter that cannot ask says no prompt
        var seals: [Accessibility: [UInt8]] = [:]
        for seal in try client.call(request).result.seals { seals[seal.accessibility] = seal.seal }
        return seals
    }

    /// Root only: the gatekeeper's seals on the class public keys of `master` for the user `uid`,
    /// with no authentication (a keychain with no password cannot authenticate: HostProtectorAdmin).
    /// The gatekeeper refuses this request from anyone but root.
    static func sealsForUser(_ uid: UInt32, master: SecureBytes, prompter: any Prompter,
                             environment: KeygateEnvironment) throws -> [Accessibility: [UInt8]] {
        var request = GateRequest(operation: .certify, flags: .noPrompt, classKeys: try classKeys(of: master), subjectUID: uid)
        request.flags.insert(.forUser)
        var seals: [Accessibility: [UInt8]] = [:]
        for seal in try GateClient(prompter: prompter, environment: environment).call(request).result.seals { seals[seal.accessibility] = seal.seal }
        return seals
    }

    /// The class public keys of `master`, each without a seal yet.
    static func classKeys(of master: SecureBytes) throws -> [GateRequest.ClassKey] {
        try Accessibility.allCases.map { accessibility in
            GateRequest.ClassKey(accessibility: accessibility, publicKey: try ClassKeys.keyPair(masterKey: master, for: accessibility).publicKey,
                                 seal: [])
        }
    }

    /// Forgets the authentications of this scope, or with `all` of every scope (sudo -k / -K).
    func forget(all: Bool) {
        var request = GateRequest(operation: .forget)
        if all { request.flags.insert(.all) }
        _ = try? GateClient(prompter: prompter, environment: environment).call(request)   // try?: the key goes from the keyring all the same; doctor reports the gatekeeper
    }

    /// The user's lockout as root's records hold it: seconds left (0: none) and the failed attempts
    /// counted since the last success. Never prompts.
    func lockoutState() throws -> (secondsLeft: UInt32, failedAttempts: UInt32) {
        let result = try client.call(GateRequest(operation: .status, flags: .noPrompt)).result
        return (result.lockoutSecondsLeft, result.failedAttempts)
    }

    /// The enrolled set's domain state (empty with no finger) and the biometric lockout, as root
    /// keeps them. Never prompts.
    func fingerprintState() throws -> (domainState: [UInt8], biometryLockedOut: Bool) {
        let result = try client.call(GateRequest(operation: .fingerprintState, flags: .noPrompt)).result
        return (result.domainState, result.biometryLockedOut)
    }

    /// After a password unlock: the public key to seal the master key to for a finger's reopening
    /// (empty when it is off: no enrolled finger, or the policy's `finger-unlock = 0`). Never prompts.
    func armFingerUnlock() throws -> [UInt8] {
        try client.call(GateRequest(operation: .fingerUnlockArm, flags: .noPrompt)).result.seed
    }

    /// A finger reopens the locked keychain: the master key sealed by `armFingerUnlock`'s key,
    /// opened by the gatekeeper after a match within its window.
    func fingerUnlock(_ sealed: [UInt8], reason: String) throws -> SecureBytes {
        var request = GateRequest(operation: .fingerUnlock, reason: reason, seed: sealed)
        if (try? prompter.ensureAvailable()) == nil { request.flags.insert(.noPrompt) }   // try?: a prompter that cannot ask says no prompt
        var bytes = try client.call(request).result.seed
        return try SecureBytes(consuming: &bytes)
    }

    /// Migration from 1.x: the device-bound seed of a this-device-only class, from its master-derived seed.
    func legacyClassSeed(_ seed: SecureBytes) throws -> SecureBytes {
        let request = GateRequest(operation: .legacyClassSeed, seed: seed.unprotectedCopy())
        var bytes = try client.call(request).result.seed
        return try SecureBytes(consuming: &bytes)
    }

    /// Sends the context's handle (or asks for one), and its no-prompt wish; a prompter that
    /// cannot ask turns a needed prompt into its own interaction-not-allowed error.
    private func callWithContext(_ request: inout GateRequest, meanwhile: () throws -> Void = {}) throws -> GateClient.Reply {
        if let authContext {
            if authContext.interactionNotAllowed { request.flags.insert(.noPrompt) }
            if let handle = authContext.handle {
                request.handle = handle
            } else if !authContext.isInvalidated {
                request.flags.insert(.issueHandle)
                request.handleSeconds = authContext.reuseDuration
            }
        }
        var unavailable: (any Error)?
        do { try prompter.ensureAvailable() } catch {
            unavailable = error
            request.flags.insert(.noPrompt)
        }
        do {
            let reply = try client.call(request, meanwhile: meanwhile)
            if !reply.result.handle.isEmpty { authContext?.remember(handle: reply.result.handle) }
            return reply
        } catch let error as KeychainError where error.code == .interactionNotAllowed && authContext?.interactionNotAllowed != true {
            throw unavailable ?? error
        }
    }
}
