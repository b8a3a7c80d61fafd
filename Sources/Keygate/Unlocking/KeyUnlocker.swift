// Finds the master key and the class keys derived from it for one caller: from what the key
// source holds (KeySource: the kernel keyring's cache, the protectors on disk), else by an
// unlock through the gatekeeper (GateAccess), root's PAM conversation whose prompts this
// process shows; the password typed there opens the master key, which the key source then
// holds for the policy's lock-after. Gate keys (presence, current set, device) are never here:
// a read gets its item's shares from the gatekeeper (ReadUnlock).
//
// Each step returns a value (Unlocked): the keys, and what an unlock still owes (FollowUp).
// The authentication that opens the keychain asks the gatekeeper, in the same run, for the
// seals on the class keys and the finger unlock's key; only what it could not settle is owed,
// and the operation runs it (KeychainOperations.settle). The unlocker holds no item store.
//
// A keychain with only a host protector (a service account) has no password to ask for: a
// locked one fails at once with interaction-not-allowed.
//
// Its other files: ReadUnlock (what a read needs), FingerReopen, KeyUnlocker+Authentication
// (the prompt, its reason, the audit lines), KeyUnlocker+State (status, validate), KeySource,
// Unlocked (the values). Delegates the gatekeeper to GateAccess, the keys on disk and in the
// keyring to KeySource, key derivation to Crypto/, password changes to PasswordChange.
internal import KeygateGateWire

struct KeyUnlocker: Sendable {
    static let masterName = KeySource.masterName
    static let afterFirstUnlockName = KeySource.afterFirstUnlockName

    let context: KeychainContext
    let prompter: any Prompter
    let reason: String?
    let authContext: AuthenticationContext?
    /// A policy's allow-non-interactive: use keys already held, never prompt.
    let neverPrompt: Bool
    /// The item this unlocker works for, named in its audit lines and prompt (never its secret).
    let item: ItemIdentity?
    /// The keys held and kept (no prompt, no gatekeeper), and the gatekeeper: built once, here.
    let source: KeySource
    let gate: GateAccess

    init(context: KeychainContext, prompter: any Prompter, reason: String?, authContext: AuthenticationContext?,
         neverPrompt: Bool = false, item: ItemIdentity? = nil) {
        self.context = context
        self.prompter = prompter
        self.reason = reason
        self.authContext = authContext
        self.neverPrompt = neverPrompt
        self.item = item
        source = KeySource(dataDirectory: context.dataDirectory, uid: context.uid, lockAfter: context.policy.lockAfter)
        gate = GateAccess(prompter: prompter, authContext: authContext, environment: context.environment) { event, service, detail in
            UnlockAudit.record(event, service: service, detail: detail.isEmpty ? nil : detail, context: context, item: item,
                               reason: authContext?.localizedReason ?? reason)
        }
    }

    /// This unlocker under one item's policy: its windows, services, tries and prompt.
    func applying(_ decision: PolicyDecision, for identity: ItemIdentity) -> KeyUnlocker {
        KeyUnlocker(context: context.with(policy: decision.policy), prompter: prompter, reason: decision.prompt ?? reason,
                    authContext: authContext, neverPrompt: decision.allowNonInteractive, item: identity)
    }

    // MARK: Class keys

    /// The symmetric key that seals and opens plain items of this class (scheme 1).
    func classKey(for accessibility: Accessibility, createIfNeeded: Bool) throws -> Unlocked<SecureBytes> {
        if let cached = source.cachedClassKey(for: accessibility) { return Unlocked(cached) }
        return try masterKey(createIfNeeded: createIfNeeded).map { try ClassKeys.derive(masterKey: $0, for: accessibility) }
    }

    /// The class key pair of gated and this-device-only items (scheme 2).
    func classKeyPair(for accessibility: Accessibility) throws -> Unlocked<BoxKeyPair> {
        if let pair = source.afterFirstUnlockPair(accessibility) { return Unlocked(pair) }
        return try masterKey(createIfNeeded: false).map { try ClassKeys.keyPair(masterKey: $0, for: accessibility) }
    }

    /// The class public key new items of `accessibility` are sealed to, with the gatekeeper's
    /// seal on it. Without one (a new or upgraded keychain), the keychain is unlocked through
    /// the gatekeeper once, which records both.
    func sealedClassKey(for accessibility: Accessibility) throws -> Unlocked<GateRequest.ClassKey> {
        if let key = try source.sealedClassKey(for: accessibility) { return Unlocked(key) }
        var owed: [FollowUp]
        if source.isInitialized {
            owed = try unlock().owed
        } else {
            owed = try masterKey(createIfNeeded: true).owed
        }
        // The seals are owed when the unlock could not ask for them with its password: settled here, before sealing to them.
        for case .certify(let master) in owed { try certify(master) }
        owed.removeAll { if case .certify = $0 { return true } else { return false } }
        guard let key = try source.sealedClassKey(for: accessibility) else {
            throw KeychainError.notAvailable("""
                the keychain's public keys could not be recorded in \(context.dataDirectory): check that the folder is writable, \
                then run `keygate unlock`
                """)
        }
        return Unlocked(key, owed: owed)
    }

    /// Seals to public keys only: the class key recorded in keys.json (with the gatekeeper's
    /// seal on it) and the item's own gate keys, which the gatekeeper derives for its identity
    /// and flags. Once the keychain's class keys are sealed, adding never prompts.
    func sealGated(_ secret: SecureBytes, _ attributes: ItemAttributes) throws -> Unlocked<[UInt8]> {
        let flags = attributes.accessControl?.rawValue ?? 0
        return try sealedClassKey(for: attributes.accessibility).map { classKey in
            let gates = try gate.recipients(for: attributes.identity, accessControl: flags, classKey: classKey)
            return try GatedBlob.seal(secret, identity: attributes.identity, accessibility: attributes.accessibility,
                                      accessControl: flags, classKey: classKey.publicKey,
                                      gates: gates, combination: attributes.accessControl?.requiresAll == false ? .any : .all)
        }
    }

    // MARK: The master key

    /// The master key, from the cache or by an unlock (which may initialise the keychain).
    func masterKey(createIfNeeded: Bool) throws -> Unlocked<SecureBytes> {
        if let cached = source.cachedMaster { return Unlocked(cached) }
        if let reopened = try openWithFinger() { return Unlocked(reopened) }
        if !source.isInitialized {
            guard createIfNeeded else {
                throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
            }
            let created = try initialize()
            showRecoveryKeyOnce(created.value.recoveryKey)
            return created.map(\.masterKey)
        }
        return try unlock()
    }

    /// Authenticates through the gatekeeper and opens everything the password protects. The
    /// authentication asks, in the same run, for the class keys' seals and the finger's key.
    func unlock() throws -> Unlocked<SecureBytes> {
        try unlockWithPassword().map(\.masterKey)
    }

    /// `unlock()`, with what the password opened (1.x's gate pairs while the keychain has them).
    func unlockWithPassword() throws -> Unlocked<PasswordUnlock> {
        guard source.isInitialized else {
            throw KeychainError.notAvailable("the keychain is not initialised: run `keygate init` (the first `keygate add` does it too)")
        }
        try requirePasswordProtector()
        let grant = try authenticate(purpose: .unlock, unlocking: source.recordedClassKeys() ?? [])
        return try opened(grant)
    }

    /// Opens the login protector with a password the gatekeeper's PAM conversation just took,
    /// holds the master key, and records what the same run of the gatekeeper gave (`grant`: the
    /// class keys' seals, the finger unlock's key). What it did not give is owed.
    func opened(_ grant: GateAccess.Grant) throws -> Unlocked<PasswordUnlock> {
        let password = try grant.typedPassword(service: context.policy.pamService)
        let unlocked: PasswordUnlock
        do {
            unlocked = try source.open(password: password)
        } catch let stale as KeySource.StaleLoginProtector {
            throw stale.underlying
        }
        hold(unlocked.masterKey)
        var owed: [FollowUp] = []
        do {
            if !(try source.record(seals: grant.seals, sent: grant.sent, master: unlocked.masterKey)) {
                owed.append(.certify(unlocked.masterKey))
            }
        } catch {
            // A read-only data folder still reads; an add then says what is wrong.
            audit(.unlock, detail: "the class keys' seals were not recorded: \(error)")
        }
        if let fingerKey = grant.fingerKey {
            source.armFinger(unlocked.masterKey, publicKey: fingerKey)
        } else if FingerReopen.mayArm(context.environment) {
            owed.append(.armFingerUnlock(unlocked.masterKey))
        }
        if unlocked.presence != nil || unlocked.currentSet != nil { owed.append(.moveLegacyItems(unlocked)) }
        return Unlocked(unlocked, owed: owed)
    }

    /// A service account's keychain has no password protector: nothing that needs a password
    /// (an unlock, user presence, current set) can be done for it, and it says so at once.
    func requirePasswordProtector() throws {
        guard !source.hasLoginProtector, source.hasHostProtector else { return }
        throw KeychainError.interactionNotAllowed("""
            the keychain of \(context.userName) has no password protector (only the host protector and the recovery key open \
            it), so nothing that needs a password can be opened: items that need user presence or current-set stay closed (add \
            them with --access none, or give them `default-access = none` in a system policy); after a reboot root opens \
            after-first-unlock items with `keygate unlock --host-protector --user \(context.userName)`
            """)
    }

    /// Unlocks with the recovery key instead of the password.
    func unlock(recoveryKey: SecureBytes) throws -> SecureBytes {
        let master = try source.open(recoveryKey: recoveryKey)
        hold(master)
        return master
    }

    /// Creates the master key, wrapped by the user's login password (checked through
    /// PAM first, so the protector always matches the real login password) and by a
    /// recovery key, which is returned to be shown once. The class keys did not exist when the
    /// password was typed: their seals are owed (`certify` accepts that password), and the
    /// finger unlock's arming with them.
    func initialize() throws -> Unlocked<(masterKey: SecureBytes, recoveryKey: SecureBytes)> {
        if source.isInitialized {
            throw KeychainError.duplicateItem("""
                the keychain is already initialised in \(context.dataDirectory): nothing to do (to start over, remove that folder; \
                items sealed by the old key become unreadable)
                """)
        }
        // No class key to send yet; the finger unlock's key can be had in the same run all the same.
        let grant = try authenticate(purpose: .unlock, unlocking: [])
        let password = try grant.typedPassword(service: context.policy.pamService)
        let kdf = try context.kdfForNewProtector()
        let created = try source.store.initialize(password: password, kdf: kdf)
        hold(created.masterKey)
        if let fingerKey = grant.fingerKey { source.armFinger(created.masterKey, publicKey: fingerKey) }
        var owed: [FollowUp] = [.certify(created.masterKey)]
        if grant.fingerKey == nil, FingerReopen.mayArm(context.environment) { owed.append(.armFingerUnlock(created.masterKey)) }
        return Unlocked(created, owed: owed)
    }

    // MARK: Follow-ups (run by the operations: KeychainOperations.settle)

    /// Records the class public keys with the gatekeeper's seals. The seals need an
    /// authentication in this scope within the last minute, which the unlock that owes this made.
    func certify(_ master: SecureBytes) throws {
        let seals = try gate.certify(try GateAccess.classKeys(of: master))
        try source.record(seals: seals, master: master)
    }

    // MARK: Locking

    /// Drops the unlocked keys: the master key and this scope's authentications (like
    /// `sudo -k`), or with `all` every Keygate key of this user and every authentication
    /// the gatekeeper recorded for it (like `sudo -K`).
    @discardableResult
    func lock(all: Bool) -> Int {
        authContext?.invalidate()
        gate.forget(all: all)
        if all {
            source.dropFingerCopy()
            let dropped = source.evictAll()
            audit(.lock, detail: "all scopes, \(dropped) keys dropped")
            return dropped
        }
        let dropped = source.evictMaster() ? 1 : 0
        audit(.lock, detail: "\(dropped) keys dropped")
        return dropped
    }

    /// Holds the master key for the policy's lock-after, with an audit line. A full keyring
    /// quota does not stop the read that unlocked: the next read authenticates again.
    func hold(_ master: SecureBytes) {
        audit(.unlock, detail: "master key held for \(context.policy.lockAfter) s")
        if let error = source.hold(master) { audit(.unlock, detail: "the kernel keyring did not hold every key: \(error)") }
    }

    /// When a write creates the keychain implicitly, the recovery key still has to be
    /// shown once: it goes to the person through the prompter (terminal or stderr), written
    /// from locked memory.
    private func showRecoveryKeyOnce(_ recoveryKey: SecureBytes) {
        let text: SecureBytes
        do { text = try RecoveryKey.format(recoveryKey) } catch { return }   // a key of the wrong size is never made
        prompter.notify("Keygate created your keychain. Recovery key, shown only this once; keep it somewhere safe:\n  ",
                        secret: text, "\nIt unlocks the keychain if your password is lost (keygate unlock --recovery).")
    }
}

extension GateKind {
    /// The name used in messages.
    var name: String {
        switch self {
        case .accessClass: return "class"
        case .presence: return "presence"
        case .currentSet: return "current-set"
        case .enrolledSet: return "enrolled-set"
        case .device: return "device"
        }
    }
}
