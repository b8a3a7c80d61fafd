// What keygate-gatekeeper does with one request (docs/GATEKEEPER.md), as root, for the
// real uid that ran it. The item's rules come from root's policy files (the user's own
// may only tighten), the scope from the kernel (CallerScope), the records and the lockout
// from root's file (GateRecords), the keys from root's secret (GateSecrets). PAM runs here,
// through the item's service, with its prompts relayed to the caller (RelayPrompter).
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct GateServer {
    let user: UserAccount
    /// The process whose scope the records are kept for: the helper's parent, or the daemon's peer.
    let caller: Int32
    let prompter: any GatePrompter
    /// A folder of PAM service files instead of /etc/pam.d (test-hook builds only).
    let pamConfdir: String?
    let overrides: TestOverrides
    /// The environment the gatekeeper's main built once it had set it (KeygateEnvironment): the test hooks, passed down.
    let environment: KeygateEnvironment
    /// The daemon's cache of secrets (nil in the helper, which runs once).
    var cache: GateDaemonCache? = nil
    /// Root asked for `user` (certify for a passwordless keychain): no authentication is needed.
    var rootAsks = false

    /// What the decision rested on, for the audit record (GateAuditFile).
    final class DecisionNote {
        /// "window", "handle" or "password" (PAM ran); nil when nothing was decided.
        var basis: String?
        var scope: String?
        var pamService: String?
        /// PAM took a typed password in this request (never a finger): what `unlocking` waits for.
        var passwordTaken = false
        /// What `unlocking` did in this run besides the operation (`certify`, `finger-unlock-arm`).
        var settled: [String] = []
        /// An unrecorded presence: nothing was read from the records, and nothing written to them.
        var unrecorded = false
    }

    let note = DecisionNote()

    func handle(_ request: GateRequest) throws -> GateAnswer {
        do {
            let result = try dispatch(request)
            recordDecision(request, refusal: nil)
            return result
        } catch let error as KeychainError {
            recordDecision(request, refusal: error)
            throw error
        }
    }

    /// One line in root's audit record (GateAuditFile) for each decision about presence: an item's
    /// boxes opened or a presence check, an unlock, a validate, a lock, class keys sealed. Keys,
    /// checks, status and migration seeds decide nothing and are not recorded.
    /// The daemon records what it grants only: each of its refusals sends the client to the setuid
    /// helper, which decides again and records that.
    private func recordDecision(_ request: GateRequest, refusal: KeychainError?) {
        if cache != nil, refusal != nil { return }
        let op: String
        switch request.call {
        case .open: op = "open"
        case .presence: op = "presence"
        case .authenticate: op = "unlock"
        case .validate: op = "validate"
        case .forget(let all): op = all ? "lock-all" : "lock"
        case .certify: op = "certify"
        case .fingerUnlockArm: op = "finger-unlock-arm"
        case .fingerUnlock: op = "finger-unlock"
        case .keys, .check, .status, .legacyClassSeed, .fingerprintState: return
        }
        let identity = request.item?.identity
        let itemService = identity.map { $0.itemClass == .genericPassword ? $0.service : $0.server }
        GateAuditFile.append(uid: user.uid, [
            ("uid", "\(user.uid)"), ("user", user.name), ("op", op),
            ("result", refusal == nil ? "granted" : "refused"),
            ("basis", refusal == nil ? note.basis : nil),
            ("error", refusal.map { "\($0.code)" }),
            ("scope", note.scope), ("pam-service", note.pamService),
            ("also", note.settled.isEmpty ? nil : note.settled.joined(separator: ",")),
            ("recorded", note.unrecorded ? "no" : nil),
            ("service", itemService), ("account", identity?.account),
            ("pid", "\(caller)"),
        ], environment: environment)
    }

    private func dispatch(_ request: GateRequest) throws -> GateAnswer {
        let secrets = try cache?.secrets(uid: user.uid, userName: user.name, environment: environment)
            ?? GateSecrets.load(uid: user.uid, userName: user.name, environment: environment)
        let noPrompt = request.noPrompt
        var answer: GateAnswer
        switch request.call {
        case .keys(let item, let classKeys): return try keys(item, classKeys, secrets)
        case .open(let item, let boxes, let presence): answer = try open(item, boxes, presence, noPrompt: noPrompt, secrets)
        case .authenticate(let authentication): answer = try authenticate(authentication, noPrompt: noPrompt, secrets)
        case .legacyClassSeed(let seed): return try legacySeed(seed)
        case .presence(let item, let presence):
            answer = .presence(handle: try ensurePresence(item, presence, noPrompt: noPrompt))
        case .forget(let all): return try forget(all: all)
        case .certify(let certification): return try certify(certification, noPrompt: noPrompt, secrets)
        case .check(let item, let boxes): return try check(item, boxes, secrets)
        case .status: return try status()
        case .validate(let validation): answer = try validate(validation, noPrompt: noPrompt)
        case .fingerprintState: return try fingerprintState(secrets)
        case .fingerUnlockArm: return try armFingerUnlock(secrets)
        case .fingerUnlock(let unlock): return try fingerUnlock(unlock, noPrompt: noPrompt, secrets)
        }
        if let sent = request.unlocking, note.passwordTaken { answer = try settleUnlock(answer, sent, secrets) }
        return answer
    }

    /// `unlocking`, after a password typed in this request (never a finger, a window, a handle or
    /// a `validate` that only extended a window): what `certify` and `fingerUnlockArm` give after
    /// a real authentication, in the same run (the password was taken now, so their "within the
    /// last minute" holds by construction).
    private func settleUnlock(_ answer: GateAnswer, _ sent: [GateRequest.ClassKey], _ secrets: GateSecrets) throws -> GateAnswer {
        let sealed = try seals(sent, secrets)
        if !sealed.isEmpty { note.settled.append("certify") }
        var policy = try policies().keychainDecision().policy
        overrides.apply(to: &policy)
        let key = try fingerUnlockKey(policy, secrets)
        if !key.isEmpty { note.settled.append("finger-unlock-arm") }
        let settled = GateAnswer.Settled(seals: sealed, fingerUnlockKey: key)
        switch answer {
        case .open(let shares, let handle, _): return .open(shares: shares, handle: handle, settled: settled)
        case .presence(let handle, _): return .presence(handle: handle, settled: settled)
        case .validate: return .validate(settled: settled)
        case .authenticate(_, let handle, _): return .authenticate(seals: sealed, handle: handle, fingerUnlockKey: key)
        default: return answer
        }
    }

    // MARK: Operations

    /// The item's gate public keys, once the class key it will be sealed with checks out.
    private func keys(_ item: GateRequest.Item, _ classKeys: [GateRequest.ClassKey], _ secrets: GateSecrets) throws -> GateAnswer {
        let identity = item.identity
        var needsDevice = false
        for key in classKeys {
            let expected = try secrets.classSeal(accessibility: key.accessibility, publicKey: key.publicKey)
            guard key.seal.count == expected.count, Sodium.constantTimeEquals(key.seal, expected) else {
                throw KeychainError.param("""
                    the public key your keychain's keys.json gives for \(key.accessibility.rawValue) items was not recorded by your \
                    keychain (another process may have replaced it): nothing was sealed to it; run `keygate unlock` to record the right \
                    keys again
                    """)
            }
            needsDevice = needsDevice || key.accessibility.isThisDeviceOnly
        }
        var publicKeys: [GateAnswer.PublicKey] = []
        for kind in GateKind.kinds(for: AccessControl(rawValue: item.accessControl).constraints) {
            let pair: BoxKeyPair
            switch kind {
            case .currentSet: pair = try secrets.currentSetPair(flags: item.accessControl, identity: identity)
            case .enrolledSet:
                pair = try secrets.enrolledSetPair(EnrolledPrints.of(userName: user.name, environment: environment), flags: item.accessControl, identity: identity)
            case .presence, .device, .accessClass:
                pair = try secrets.presencePair(generation: secrets.generation, flags: item.accessControl, identity: identity)
            }
            publicKeys.append(GateAnswer.PublicKey(kind: kind, key: pair.publicKey))
        }
        if needsDevice {
            publicKeys.append(GateAnswer.PublicKey(kind: .device, key: try secrets.devicePair(flags: item.accessControl, identity: identity,
                                                                                             environment: environment).publicKey))
        }
        return .keys(publicKeys)
    }

    /// Opens the boxes the item's policy allows now, authenticating first when it needs to.
    private func open(_ item: GateRequest.Item, _ boxes: [GateRequest.Box], _ presence: GateRequest.Presence, noPrompt: Bool,
                      _ secrets: GateSecrets) throws -> GateAnswer {
        let identity = item.identity
        var pairs: [BoxKeyPair] = []
        var needsPresence = false
        for box in boxes {
            guard let pair = try pair(for: box, item, secrets) else { throw GateRefusal.invalidated(box.kind, identity) }
            pairs.append(pair)
            needsPresence = needsPresence || box.kind != .device
        }
        var handle: [UInt8] = []
        var shares: [GateAnswer.Share] = []
        if needsPresence {
            handle = try ensurePresence(item, presence, noPrompt: noPrompt, legacyCurrentSet: GateRefusal.isLegacyCurrentSet(item, boxes))
        }
        for (index, box) in boxes.enumerated() {
            // Into the reply's own array (wiped with the reply), not through locked memory first.
            guard let share = secrets.share(in: box.sealed, openedWith: pairs[index]), share.count == GatedBlob.contentKeyBytes else {
                throw KeychainError.decode("""
                    the secret of \(identity.displayName) cannot be opened: its access-control box is corrupt; delete the item and add \
                    it again, or restore it from a backup
                    """)
            }
            shares.append(GateAnswer.Share(index: UInt8(index), share: share))
        }
        return .open(shares: shares, handle: handle)
    }

    /// Seals class public keys for a caller that authenticated in this scope within `certifyWindow`
    /// seconds (through any service), else after PAM through the keychain's service.
    private func certify(_ certification: GateRequest.Certification, noPrompt: Bool, _ secrets: GateSecrets) throws -> GateAnswer {
        if !rootAsks { try authenticateToCertify(reason: certification.reason, noPrompt: noPrompt) }
        return .certify(seals: try seals(certification.classKeys, secrets))
    }

    /// Root's seal on each class public key.
    private func seals(_ classKeys: [GateRequest.ClassKey], _ secrets: GateSecrets) throws -> [GateAnswer.Seal] {
        try classKeys.map { GateAnswer.Seal(accessibility: $0.accessibility, seal: try secrets.classSeal(accessibility: $0.accessibility,
                                                                                                          publicKey: $0.publicKey)) }
    }

    /// An authentication in this scope within `certifyWindow` seconds, else one through PAM now.
    private func authenticateToCertify(reason: String, noPrompt: Bool) throws {
        var policy = try policies().keychainDecision().policy
        overrides.apply(to: &policy)
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        let now = GateRecords.now
        // The time of an authentication itself: a window `validate` extended is not a password.
        let recent = try GateRecords.update(uid: user.uid, environment: environment) { records in
            records.recentAuthentication(scope: scope.id, within: certifyWindow, now: now)
        }
        (note.scope, note.pamService, note.basis) = (scope.id, policy.pamService, recent ? "window" : nil)
        if !recent {
            if noPrompt {
                throw KeychainError.interactionNotAllowed("""
                    recording the keychain's public keys needs your password, and no prompt is allowed: run `keygate unlock`
                    """)
            }
            try authenticateThroughPAM(service: policy.pamService, scope: scope, policy: policy, reason: reason,
                                       recordAs: "unlock:" + policy.pamService)
        }
    }

    /// "A password within the last minute": how recent a real authentication certify and
    /// fingerUnlockArm accept (a test-hook build may shorten it; release builds never read the hook).
    static let certifyWindowSeconds: UInt64 = 60
    private var certifyWindow: UInt64 { overrides.certifyWindow.map(UInt64.init) ?? Self.certifyWindowSeconds }

    /// The gatekeeper's key for one of the item's boxes, or nil when the box names another key.
    private func pair(for box: GateRequest.Box, _ item: GateRequest.Item, _ secrets: GateSecrets) throws -> BoxKeyPair? {
        let derived: BoxKeyPair
        let identity = item.identity
        switch box.kind {
        case .presence: return try secrets.presencePair(keyID: box.keyID, flags: item.accessControl, identity: identity)
        case .currentSet: derived = try secrets.currentSetPair(flags: item.accessControl, identity: identity)
        case .enrolledSet:
            let prints = try EnrolledPrints.of(userName: user.name, environment: environment)
            guard prints.digest != nil else { return nil }   // every finger removed: the set it was bound to is gone
            derived = try secrets.enrolledSetPair(prints, flags: item.accessControl, identity: identity)
        case .device: derived = try secrets.devicePair(flags: item.accessControl, identity: identity, environment: environment)
        case .accessClass: throw GateRefusal.malformed
        }
        return derived.keyID == box.keyID ? derived : nil
    }

    /// The boxes whose key id is not one the gatekeeper derives for this item now.
    private func check(_ item: GateRequest.Item, _ boxes: [GateRequest.Box], _ secrets: GateSecrets) throws -> GateAnswer {
        var invalid: [UInt8] = []
        for (index, box) in boxes.enumerated() {
            let live: Bool
            do {
                live = try pair(for: box, item, secrets) != nil
            } catch let error as KeychainError where box.kind == .device && error.code == .notAvailable {
                live = true   // no host key: the device slot cannot be judged here, and a read says why
            }
            if !live { invalid.append(UInt8(index)) }
        }
        return .check(invalid: invalid)
    }

    /// The user's lockout and the failures counted since the last success (`keygate status`, `doctor`).
    private func status() throws -> GateAnswer {
        let lockout = try userLockout()
        let (left, failed) = try GateRecords.update(uid: user.uid, environment: environment) { records in
            (records.lockoutSecondsLeft(lockout, now: GateRecords.now) ?? 0, UInt32(clamping: records.failures + records.biometryFailures))
        }
        return .status(lockoutSecondsLeft: left, failedAttempts: failed)
    }

    /// `keygate validate` (sudo -v): the presence window of the keychain's PAM service in the caller's
    /// scope (the policy's [default] reuse-scope). An authentication still inside that window has its
    /// windows extended from now, with no prompt: each item's own window only where it is still open
    /// (GateRecords.extend), and the time of the authentication itself is left as it was. Else (or with
    /// `fresh`: the client needs the password to open a locked keychain) PAM runs, and its success is
    /// recorded as presence for this scope, as an item's read records it. The window is the caller's
    /// scope, never one the request names.
    private func validate(_ validation: GateRequest.Validation, noPrompt: Bool) throws -> GateAnswer {
        var policy = try policies().keychainDecision().policy
        overrides.apply(to: &policy)
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        let service = policy.pamService
        (note.scope, note.pamService) = (scope.id, service)
        if !validation.fresh {
            let extended = try GateRecords.update(uid: user.uid, environment: environment) {
                $0.extend(service: service, scope: scope.id, window: policy.reuseDuration, now: GateRecords.now)
            }
            if extended {
                note.basis = "window"
                return .validate()
            }
        }
        if noPrompt {
            throw KeychainError.interactionNotAllowed("""
                validating needs your password (nothing in this scope's window to extend), and no prompt is allowed
                """)
        }
        try authenticateThroughPAM(service: service, scope: scope, policy: policy, reason: validation.reason,
                                   typedPasswordNeeded: validation.fresh)
        return .validate()
    }

    /// The enrolled set's domain state for LAContext.evaluatedPolicyDomainState: a keyed hash of
    /// root's digest of the prints (GateSecrets.domainState), empty with no finger; and the
    /// biometric lockout (canEvaluatePolicy's biometryLockout).
    private func fingerprintState(_ secrets: GateSecrets) throws -> GateAnswer {
        let domainState = try secrets.domainState(EnrolledPrints.of(userName: user.name, environment: environment)) ?? []
        let locked = try GateRecords.update(uid: user.uid, environment: environment) { $0.biometryLocked }
        return .fingerprintState(domainState: domainState, biometryLockedOut: locked)
    }

    /// After a password authentication in this scope within `certifyWindow` (an unlock, or the
    /// item's password that also opened the keychain; never a finger's): a new
    /// finger-unlock pair, its public key in the answer; empty when the policy's `finger-unlock` is 0
    /// or no finger is enrolled (nothing is kept then).
    private func armFingerUnlock(_ secrets: GateSecrets) throws -> GateAnswer {
        var policy = try policies().keychainDecision().policy
        overrides.apply(to: &policy)
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        let now = GateRecords.now
        let fingers: Set<String> = [policy.biometryPamService, "unlock:" + policy.biometryPamService]
        // The time of a password authentication itself, never of a `validate` that extended its window.
        let unlocked = try GateRecords.update(uid: user.uid, environment: environment) { records in
            records.recentAuthentication(scope: scope.id, within: certifyWindow, excluding: fingers, now: now)
        }
        guard unlocked else {
            throw KeychainError.interactionNotAllowed("""
                a finger may reopen the keychain only after a password unlock in this scope: run `keygate unlock`
                """)
        }
        return .fingerUnlockArm(publicKey: try fingerUnlockKey(policy, secrets))
    }

    /// A new finger-unlock pair's public key, or empty (the kept one dropped) when the policy's
    /// `finger-unlock` is 0 or no finger is enrolled.
    private func fingerUnlockKey(_ policy: Policy, _ secrets: GateSecrets) throws -> [UInt8] {
        guard policy.fingerUnlock > 0, try EnrolledPrints.of(userName: user.name, environment: environment).digest != nil else {
            FingerUnlockKey.drop(uid: user.uid, environment: environment)
            return []
        }
        return try FingerUnlockKey.make(uid: user.uid, generation: secrets.generation, account: try secrets.accountTag(),
                                        environment: environment).pair.publicKey
    }

    /// A finger reopens the locked keychain: the kept pair, within the policy's window since the
    /// password that made it, under the same password and boot, with biometry not locked out;
    /// then a match through the biometric stack (recorded as an unlock, which no item accepts);
    /// then the master key sealed in the request, opened. Nothing kept, or kept no longer, is
    /// .itemNotFound before any scan (the client drops its sealed copy and asks for the password).
    private func fingerUnlock(_ unlock: GateRequest.FingerUnlock, noPrompt: Bool, _ secrets: GateSecrets) throws -> GateAnswer {
        var policy = try policies().keychainDecision().policy
        overrides.apply(to: &policy)
        func refuse(_ why: String) -> KeychainError {
            FingerUnlockKey.drop(uid: user.uid, environment: environment)
            return .itemNotFound("a finger cannot reopen the keychain now (\(why)): your password opens it, and arms the finger again")
        }
        guard unlock.sealedMasterKey.count == GateRequest.sealedMasterKeyBytes else { throw GateRefusal.malformed }
        guard let kept = try FingerUnlockKey.load(uid: user.uid, environment: environment) else {
            throw KeychainError.itemNotFound("""
                a finger cannot reopen the keychain now: the gatekeeper keeps nothing for it (a reboot, `keygate lock --all` or the \
                biometric lockout dropped it, or no password unlock armed it); your password opens it, and arms the finger again
                """)
        }
        let now = GateRecords.now
        guard policy.fingerUnlock > 0, now >= kept.madeAt, now - kept.madeAt <= UInt64(policy.fingerUnlock) else {
            throw refuse("more than \(policy.fingerUnlock) s since the last password")
        }
        // A seed left by an earlier account of this uid (root forgot it, a new account got the uid) opens nothing.
        guard Sodium.constantTimeEquals(kept.account, try secrets.accountTag()) else { throw refuse("it was armed for another account") }
        guard kept.generation == secrets.generation else { throw refuse("your password has changed since") }
        guard !(try GateRecords.update(uid: user.uid, environment: environment) { $0.biometryLocked }) else { throw refuse("biometry is locked out") }
        if noPrompt {
            throw KeychainError.interactionNotAllowed("reopening the keychain needs your fingerprint, and no prompt is allowed")
        }
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        try FingerprintReader.requireReady(userName: user.name, environment: environment)
        try authenticateThroughPAM(service: policy.biometryPamService, scope: scope, policy: policy, reason: unlock.reason,
                                   recordAs: "unlock:" + policy.biometryPamService, credential: .fingerprint)
        guard let master = SealedBox.openToArray(unlock.sealedMasterKey[...], with: kept.pair), master.count == 32 else {
            throw KeychainError.decode("""
                the sealed master key in your data folder does not open with the gatekeeper's key (replaced, or another \
                keychain's): your password opens the keychain and seals it again
                """)
        }
        return .fingerUnlock(masterKey: master)
    }

    /// `keygate lock` (this scope) and `keygate lock --all` (everything, like sudo -K).
    private func forget(all: Bool) throws -> GateAnswer {
        // try?: a broken system policy file must not stop a lock, which only forgets records (narrows access).
        var policy = (try? policies().keychainDecision().policy) ?? Policy.default
        overrides.apply(to: &policy)
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        note.scope = scope.id
        try GateRecords.update(uid: user.uid, environment: environment) { records in
            if all { records.forgetAll() } else { records.forget(scope: scope.id) }
        }
        // lock --all: the finger no longer reopens the keychain either (`keygate lock` keeps it, as an iPhone's lock does).
        if all { FingerUnlockKey.drop(uid: user.uid, environment: environment) }
        return .forget
    }

    /// The item's presence condition, now: a handle of this caller, or an authentication through
    /// a stack the item accepts (PresenceRoute) in the item's scope and window, or PAM: the
    /// password, a finger, either (a finger first where one can be read, the password after a
    /// failed or missing match), or both. Returns a new handle when asked.
    private func ensurePresence(_ item: GateRequest.Item, _ presence: GateRequest.Presence, noPrompt: Bool,
                                legacyCurrentSet: Bool = false) throws -> [UInt8] {
        let decision = try itemDecision(item.identity)
        let route = PresenceRoute(AccessControl(rawValue: item.accessControl), policy: decision.policy,
                                  legacyCurrentSet: legacyCurrentSet)
        let scope = try CallerScope.of(caller: caller, decision.policy.reuseScope)
        let now = GateRecords.now
        let handleDigest = presence.context.handle.isEmpty ? nil : GateRefusal.handleDigest(presence.context.handle)
        var basis: String?
        // Unrecorded (the Secret Service's door): no record and no handle is read, so none can serve.
        note.unrecorded = presence.unrecorded
        var done = presence.unrecorded ? [] : try GateRecords.update(uid: user.uid, environment: environment) { records -> [String] in
            route.services.filter { service in
                if let handleDigest, records.handles.contains(where: {
                    $0.digest == handleDigest && $0.pid == scope.callerPID && $0.start == scope.callerStart
                        && $0.service == service && $0.expires > now
                }) {
                    basis = "handle"
                    return true
                }
                if presence.fresh { return false }
                guard records.freshAuthentication(service: service, scope: scope.id, window: decision.policy.reuseDuration,
                                                  now: now) != nil else { return false }
                basis = basis ?? "window"
                return true
            }
        }
        (note.scope, note.pamService, note.basis) = (scope.id, done.last ?? route.services[0], basis)
        if !route.isSatisfied(by: done) {
            if noPrompt {
                throw KeychainError.interactionNotAllowed("""
                    reading this item needs your \(route.fingerOnly ? "fingerprint" : "password"), and the authentication context \
                    does not allow a prompt
                    """)
            }
            if decision.allowNonInteractive {
                throw KeychainError.interactionNotAllowed("""
                    the policy for this item allows no prompt (allow-non-interactive): unlock first (keygate unlock), or see `keygate \
                    policy explain`
                    """)
            }
            done.append(try authenticate(route, done: done, scope: scope, policy: decision.policy, presence: presence))
        }
        guard let seconds = presence.context.issueHandleSeconds else { return [] }
        // The handle serves the stack that answered last (for `and`, the other is asked again within its window).
        return try issueHandle(service: done.last ?? route.services[0], scope: scope, seconds: seconds)
    }

    /// Asks for what `route` still needs after `done`; returns the stack that answered last. The
    /// finger alone fails when no finger can be read (FingerprintReader says why). Either: a
    /// finger where fprintd reports a reader and an enrolled finger and biometry is not locked
    /// out, one scan, then the password after a failed or missing match (as Apple's "Enter
    /// Password"); the password at once when the client needs it (`fresh`: it opens the keychain
    /// too). Both: the password, then the finger.
    private func authenticate(_ route: PresenceRoute, done: [String], scope: CallerScope, policy: Policy,
                              presence: GateRequest.Presence) throws -> String {
        // The daemon never prompts: it says so before asking fprintd anything (the helper asks instead).
        try prompter.ensureAvailable()
        let reason = presence.reason
        // Unrecorded: the success is counted (the failures cleared) and written nowhere as an authentication.
        let recorded = !presence.unrecorded
        func password(_ service: String) throws -> String {
            try authenticateThroughPAM(service: service, scope: scope, policy: policy, reason: reason,
                                       typedPasswordNeeded: presence.fresh, recorded: recorded)
            return service
        }
        func finger(_ service: String, maxTries: Int? = nil) throws -> String {
            try FingerprintReader.requireReady(userName: user.name, environment: environment)
            try authenticateThroughPAM(service: service, scope: scope, policy: policy, reason: reason, credential: .fingerprint,
                                       maxTries: maxTries, recorded: recorded)
            return service
        }
        switch (route.passwordService, route.fingerService) {
        case (let passwordService?, let fingerService?) where route.needsBoth:
            var last = done.last ?? passwordService
            if !done.contains(passwordService) { last = try password(passwordService) }
            if !done.contains(fingerService) { last = try finger(fingerService) }
            return last
        case (let passwordService?, let fingerService?):
            guard !presence.fresh, FingerprintReader.isReady(userName: user.name, environment: environment),
                  !(try GateRecords.update(uid: user.uid, environment: environment) { $0.biometryLocked }) else { return try password(passwordService) }
            do {
                return try finger(fingerService, maxTries: 1)
            } catch let error as KeychainError where error.code == .authFailed || error.code == .notAvailable {
                prompter.notify("The finger was not accepted: use your password instead.")
                return try password(passwordService)
            }
        case (let passwordService?, nil):
            return try password(passwordService)
        case (nil, let fingerService?):
            return try finger(fingerService)
        case (nil, nil):
            throw GateRefusal.malformed
        }
    }

    /// A handle for the caller (its pid and start time) and `service`, for at most
    /// `maxHandleSeconds` (Apple's longest LAContext reuse, 5 minutes).
    private func issueHandle(service: String, scope: CallerScope, seconds: UInt32) throws -> [UInt8] {
        let lifetime = min(seconds, Self.maxHandleSeconds)
        guard lifetime > 0 else { return [] }
        let handle = try SecureBytes.random(count: GateRequest.handleBytes).unprotectedCopy()
        let entry = GateRecords.Handle(digest: GateRefusal.handleDigest(handle), pid: scope.callerPID, start: scope.callerStart,
                                       service: service, expires: GateRecords.now + UInt64(lifetime))
        try GateRecords.update(uid: user.uid, environment: environment) { $0.handles.append(entry) }
        return handle
    }

    static let maxHandleSeconds: UInt32 = 300

    /// An unlock: PAM through the keychain's service, recorded for this scope; seals the class keys sent.
    private func authenticate(_ authentication: GateRequest.Authentication, noPrompt: Bool, _ secrets: GateSecrets) throws -> GateAnswer {
        let decision = try policies().keychainDecision()
        var policy = decision.policy
        overrides.apply(to: &policy)
        if noPrompt {
            throw KeychainError.interactionNotAllowed("this needs your password, and the authentication context does not allow a prompt")
        }
        let scope = try CallerScope.of(caller: caller, policy.reuseScope)
        (note.scope, note.pamService) = (scope.id, policy.pamService)
        let handleSeconds = authentication.context.issueHandleSeconds
        if authentication.biometric {
            // LAContext's biometric policy: a finger, recorded and handled as a biometric item's.
            guard authentication.classKeys.isEmpty, !authentication.unlocking else { throw GateRefusal.malformed }
            try FingerprintReader.requireReady(userName: user.name, environment: environment)
            try authenticateThroughPAM(service: policy.biometryPamService, scope: scope, policy: policy, reason: authentication.reason,
                                       credential: .fingerprint)
            let handle = try handleSeconds.map { try issueHandle(service: policy.biometryPamService, scope: scope, seconds: $0) } ?? []
            return .authenticate(seals: [], handle: handle)
        }
        try authenticateThroughPAM(service: policy.pamService, scope: scope, policy: policy, reason: authentication.reason,
                                   recordAs: handleSeconds != nil ? nil : "unlock:" + policy.pamService,
                                   typedPasswordNeeded: handleSeconds == nil)
        let handle = try handleSeconds.map { try issueHandle(service: policy.pamService, scope: scope, seconds: $0) } ?? []
        // `unlocking`: the keys are sealed after a typed password only, by dispatch's settlement.
        return .authenticate(seals: authentication.unlocking ? [] : try seals(authentication.classKeys, secrets), handle: handle)
    }

    /// Migration from 1.x: BLAKE2b(1.x device key; seed), the seed of a this-device-only class pair.
    private func legacySeed(_ sent: [UInt8]) throws -> GateAnswer {
        guard sent.count == BoxKeyPair.seedBytes else { throw GateRefusal.malformed }
        guard let deviceKey = try DeviceKey.deriveFromHost(uid: user.uid, environment: environment) else {
            throw KeychainError.notAvailable("""
                this-device-only items need this host's key, and the host has none: an administrator runs `sudo keygate setup-host`
                """)
        }
        var seed = sent
        let bound = try GenericHash.hash(SecureBytes(consuming: &seed), secretKey: deviceKey, outputBytes: BoxKeyPair.seedBytes)
        return .legacyClassSeed(seed: bound.unprotectedCopy())
    }

    // MARK: PAM

    /// sudo's tries with root's failure counter and the user's one lockout; records the success for
    /// `scope`. Each attempt is counted in root's records before PAM sees the answer
    /// (RecordedAttempts), by a process the user cannot signal (GatekeeperMain), so no kill, full disk
    /// or failed write gives a guess back. `recordAs`: the name the success is recorded under (an
    /// unlock records "unlock:SERVICE", which no item's presence check accepts: opening the keychain
    /// is not presence for an item, as on a Mac). `typedPasswordNeeded`: the client opens the
    /// keychain with the password (an unlock, or a `fresh` request): a stack that let the person in
    /// without typing one (a finger in common-auth) is followed by the password-only service
    /// (`passcode-pam-service`), recorded as an unlock, so that one is typed.
    /// `recorded` false (an unrecorded presence): the success is written nowhere as an authentication.
    private func authenticateThroughPAM(service: String, scope: CallerScope, policy: Policy, reason: String,
                                        recordAs: String? = nil, credential: PAMAuthenticator.Credential = .password,
                                        maxTries: Int? = nil, typedPasswordNeeded: Bool = false, recorded: Bool = true) throws {
        let attempts = RecordedAttempts(uid: user.uid, userName: user.name, lockout: try userLockout(), service: service,
                                        scope: scope.id, recordAs: recorded ? recordAs ?? service : nil, prompter: prompter,
                                        environment: environment, credential: credential)
        let pam = PAMAuthenticator(service: service, user: user.name, confdir: pamConfdir)
        (note.scope, note.pamService) = (scope.id, service)
        let typed = try pam.authenticate(prompter: prompter, reason: reason.isEmpty ? nil : reason,
                                         maxTries: maxTries ?? policy.maxTries, attempts: attempts, credential: credential)
        note.basis = credential == .fingerprint ? "fingerprint" : "password"
        guard credential == .password else { return }
        if typed.count > 0 {
            note.passwordTaken = true
        } else if typedPasswordNeeded, service != policy.passcodePamService {
            prompter.notify("""
                PAM service '\(service)' let you in without a typed password (a finger, a token), and the keychain opens only \
                with your password: type it.
                """)
            try authenticateThroughPAM(service: policy.passcodePamService, scope: scope, policy: policy, reason: reason,
                                       recordAs: "unlock:" + policy.passcodePamService, maxTries: maxTries)
        }
    }

    /// The user's one lockout (UserLockout): the strictest of root's policy files, whatever the item.
    func userLockout() throws -> UserLockout {
        var lockout = try policies().userLockout()
        if let seconds = overrides.lockoutSeconds { lockout.seconds = seconds }
        return lockout
    }

    // MARK: Policy

    private func policies() -> PolicySet { PolicySet.load(home: user.home, uid: user.uid, environment: environment) }

    private func itemDecision(_ identity: ItemIdentity) throws -> PolicyDecision {
        let service = identity.itemClass == .genericPassword ? identity.service : identity.server
        var decision = try policies().decision(service: service, account: identity.account)
        overrides.apply(to: &decision.policy)
        return decision
    }

}
