// The operations behind every API call and CLI verb: add, read, list, delete.
// A write seals the secret with its class key and hands the blob to storage; a read
// fetches the blob once, works out what it needs (ReadNeed), has the unlocker satisfy
// that (cache, key store, gatekeeper) and opens it. Listing and deleting never need a
// key, so they never prompt.
//
// Delegates: storage to KeygateStorage, keys to KeyUnlocker (Unlocking/; only through its
// methods, ReadPathTests), sealing to KeygateCore's Crypto/.

public struct KeychainOperations: Sendable {
    let store: any ItemStore
    let keys: KeyUnlocker
    /// Where the operations run: the user, the data folder, the policy and each item's decision
    /// (the unlocker's own, held here so that the operations need not reach through it).
    let context: KeychainContext
    /// Which store this keychain uses and why, with an auto choice the first write records (never a
    /// read); nil for a store given directly.
    let storeSelection: StoreSelection?
    /// Whether a locked Secret Service collection may show its unlock window, decided once here.
    let unlockPrompt: UnlockPromptSetting

    /// Operations for the calling user, with the given way to prompt. Reads through
    /// one `context` share its authentication, as with Apple's LAContext. `unlockPrompt`: the
    /// caller's own setting (the CLI's --no-unlock-prompt, and `never` for list and exists),
    /// else KEYGATE_UNLOCK_PROMPT's. `environment`: the one the edge built (the CLI's); nil, for
    /// a library caller, is the process's now. It is passed down: no layer below reads the process's.
    public init(prompter: any Prompter, reason: String? = nil, context authContext: AuthenticationContext? = nil,
                unlockPrompt: UnlockPromptSetting? = nil, environment: KeygateEnvironment? = nil) throws {
        let environment = environment ?? KeygateEnvironment.process()
        let context = try KeychainContext.current(environment: environment)
        let selection = try StoreSelection.resolve(environment: environment, dataDirectory: context.dataDirectory,
                                                   home: context.home, deadline: context.storeDeadline)
        let setting = try unlockPrompt ?? environment.unlockPromptSetting()
        self.init(store: selection.store(deadline: context.storeDeadline, unlockPrompt: setting, environment: environment),
                  keys: KeyUnlocker(context: context, prompter: prompter, reason: reason, authContext: authContext),
                  storeSelection: selection, unlockPrompt: setting)
    }

    init(store: any ItemStore, keys: KeyUnlocker, storeSelection: StoreSelection? = nil, unlockPrompt: UnlockPromptSetting = .never) {
        self.store = store
        self.keys = keys
        context = keys.context
        self.storeSelection = storeSelection
        self.unlockPrompt = unlockPrompt
    }

    /// Seals and stores a secret with the access control its creator gave it
    /// (`requested.accessControl`; nil is none, as on Apple), raised to the policy's floor
    /// (`minimum-access`) where one matches. With `replace`, an existing item with the same
    /// identity is updated in place; without it, a duplicate is an error, reported before
    /// any prompt. With `keepingUnsetText` (`keygate add -U`, as macOS's `security
    /// add-generic-password -U`), a replaced item keeps the label and comment `requested`
    /// leaves unset. Returns what the item was sealed with, and why.
    @discardableResult
    public func add(_ requested: ItemAttributes, secret: SecureBytes, replace: Bool,
                    keepingUnsetText: Bool = false) throws -> ItemAccess {
        guard secret.count <= SealedBlob.maxSecretLength else {
            throw KeychainError.param("""
                the secret is \(secret.count) bytes, more than the \(SealedBlob.maxSecretLength)-byte limit: store a key or a path \
                to the data instead
                """)
        }
        try ItemFieldLimits.check(requested)
        try requested.accessControl?.validate()
        // The creator's access control, raised to the policy's floor, is what gets sealed.
        let decision = try context.decision(for: requested.identity)
        let access = self.access(requested: requested.accessControl, decision: decision)
        var attributes = requested
        attributes.accessControl = access.sealed
        attributes.accessibility = Accessibility.stricter(requested.accessibility, decision.accessible) ?? requested.accessibility
        let keys = self.keys.applying(decision, for: attributes.identity)
        let keeping = replace && keepingUnsetText
            && (attributes.label == nil || attributes.comment == nil || attributes.extras.isEmpty)
        let existing: [StoredItem]
        do {
            existing = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: false,
                                        detail: keeping ? .full : .attributes)
        } catch let error as KeychainError where error.reason == .noDefaultCollection {
            // No default collection (a desktop's first login): nothing can be there to clash with,
            // and the write below is what makes one, through the provider's prompt where a window
            // can be shown (as secret-tool's store does), else it says what to do.
            existing = []
        }
        if keeping, let found = existing.first?.attributes {
            let current = labels.opened(found)
            if attributes.label == nil, current.label == nil, attributes.identity == current.identity {
                attributes.sealedLabel = current.sealedLabel   // sealed and not open now: kept as it is (ItemLabels.sealed)
            }
            attributes.label = attributes.label ?? current.label
            attributes.comment = attributes.comment ?? current.comment
            if attributes.extras.isEmpty { attributes.extras = current.extras }
        }
        var replace = replace
        if !replace, !existing.isEmpty {
            // What is there may be the leftover of an add the Secret Service never finished: it
            // is not an item, so this add takes its place.
            guard try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true, detail: .attributes)
                .allSatisfy(\.isUnfinishedWrite) else {
                throw KeychainError.duplicateItem("""
                    an item for \(attributes.identity.displayName) already exists: use -U (update) to replace its secret, or delete it \
                    first
                    """)
            }
            replace = true
        }
        let blob: Unlocked<[UInt8]>
        if attributes.accessControl != nil || attributes.accessibility.isThisDeviceOnly {
            blob = try keys.sealGated(secret, attributes)
        } else {
            blob = try keys.classKey(for: attributes.accessibility, createIfNeeded: true).map { classKey in
                try SealedBlob.seal(secret, identity: attributes.identity, accessibility: attributes.accessibility, classKey: classKey)
            }
        }
        // A gated item's label is sealed too (ItemLabels): no plaintext of it in the store.
        let stored = try labels.sealed(attributes)
        try store.create(stored.value, blob: blob.value, replace: replace)
        storeSelection?.commitRecord()
        try settle(blob.owed + stored.owed, by: keys)
        return access
    }

    /// What an unlock still owes (Unlocked, FollowUp), run as explicit steps after the step that
    /// unlocked: each a request to the gatekeeper, or the 1.x move with this operation's store.
    /// The step's own result is already made (a secret open, an item stored), so a seal or an
    /// arming that fails is an audit line, and the next unlock asks again; only `keygate init`
    /// (`sealsRequired`) fails without its seals, as a new keychain needs them for its first
    /// gated item. The 1.x move's errors are thrown.
    func settle(_ owed: [FollowUp], by keys: KeyUnlocker, sealsRequired: Bool = false) throws {
        for followUp in owed {
            switch followUp {
            case .certify(let master):
                do {
                    try keys.certify(master)   // the gatekeeper's `certify`
                } catch where !sealsRequired {
                    keys.audit(.unlock, detail: "the class keys were not sealed: \(error)")
                }
            case .armFingerUnlock(let master):
                keys.armFingerUnlock(master)   // the gatekeeper's `fingerUnlockArm`; a failure is an audit line
            case .moveLegacyItems(let unlocked):
                try LegacyGateMigration(store: store, unlocker: keys).run(unlocked)
            }
        }
    }

    /// The secret of one item, or nil when there is no such item. The item's policy
    /// applies: its windows, services and prompt, and, when the policy's floor
    /// (`minimum-access`) asks for more than the item was sealed with (an item added before
    /// the floor), a PAM authentication for the floor's constraints before the secret is opened.
    /// A read flows down once: the policy decision, then the keys it scopes, then the
    /// store, then the crypto.
    public func secret(for identity: ItemIdentity) throws -> SecureBytes? {
        try ItemFieldLimits.check(identity: identity)
        let decision: PolicyDecision
        do {
            decision = try context.decision(for: identity)
        } catch {
            // A broken system policy file refuses every read of an item (and every add), but an item that
            // is not there reads as absent, and the store's own failure comes first, as always.
            guard try storedItem(identity) == nil else { throw error }
            return nil
        }
        return try secret(for: identity, decision: decision)
    }

    /// The secret of one item under its policy `decision` (KeychainContext.decision), or nil
    /// when there is no such item. One arrow down: one fetch, what the item needs (ReadNeed: its
    /// header and the decision, as a value), the unlocker satisfies that (cache, key store,
    /// gatekeeper; one prompt at most), then the item is opened.
    func secret(for identity: ItemIdentity, decision: PolicyDecision) throws -> SecureBytes? {
        guard let item = try storedItem(identity) else { return nil }
        let need = try ReadNeed(item: item, identity: identity, decision: decision)
        let keys = self.keys.applying(decision, for: identity)
        let satisfied = try keys.satisfy(need)
        let secret = try satisfied.value.open()
        try settle(satisfied.owed, by: keys)
        return secret
    }

    /// The item with exactly this identity, its blob loaded; nil when there is none (or only
    /// the leftover of an add the Secret Service never finished). Its attribute dictionary only:
    /// opening a secret needs neither its label nor its dates (ItemDetail).
    func storedItem(_ identity: ItemIdentity) throws -> StoredItem? {
        guard let item = try store.search(ItemQuery(exactly: identity), loadBlobs: true, detail: .attributes).first,
              !item.isUnfinishedWrite else { return nil }
        return item
    }

    /// The attributes of every matching item, sorted for stable output. Never prompts.
    public func attributes(matching query: ItemQuery) throws -> [ItemAttributes] {
        try ItemFieldLimits.check(query)
        return try storedItemsOpeningLabels(matching: query, loadBlobs: false)
            .map(\.attributes)
            .sorted(by: Self.listOrder)
    }

    /// The attributes of every matching item in the order they were created, as Apple's
    /// SecItemCopyMatching returns them: by creation date (seconds), then in the store's own
    /// order, which is creation order within a second (the embedded store's row ids, the Secret
    /// Service's item numbers). Never prompts.
    public func attributesInCreationOrder(matching query: ItemQuery) throws -> [ItemAttributes] {
        try ItemFieldLimits.check(query)
        return try storedItemsOpeningLabels(matching: query, loadBlobs: false)
            .map(\.attributes)
            .enumerated()
            .sorted { ($0.element.created, $0.offset) < ($1.element.created, $1.offset) }
            .map(\.element)
    }

    static func listOrder(_ lhs: ItemAttributes, _ rhs: ItemAttributes) -> Bool {
        (lhs.identity.itemClass.rawValue, lhs.identity.service, lhs.identity.server, lhs.identity.account)
            < (rhs.identity.itemClass.rawValue, rhs.identity.service, rhs.identity.server, rhs.identity.account)
    }

    /// Deletes every matching item; returns how many. Never prompts.
    @discardableResult
    public func delete(matching query: ItemQuery) throws -> Int {
        try ItemFieldLimits.check(query)
        if query[.label] != nil {
            // The store cannot read a sealed label: the items are matched here, then deleted one by one.
            var deleted = 0
            for item in try storedItemsOpeningLabels(matching: query, loadBlobs: false) {
                deleted += try store.delete(ItemQuery(exactly: item.attributes.identity))
            }
            return deleted
        }
        do {
            return try store.delete(query)
        } catch let error as KeychainError where error.code == .notAvailable {
            // Another process may have deleted a match between the store's search and its
            // delete (the item's D-Bus object is then gone): search again, and fail only if
            // something that matches is still there after a second try.
            guard !(try store.search(query, loadBlobs: false, detail: .attributes)).isEmpty else { return 0 }
            return try store.delete(query)
        }
    }

    /// Where the items are kept and why, said at `keygate init` ("the Secret Service: the
    /// Secret Service answered"); nil when the store was given directly (tests).
    public var storeChoice: String? {
        storeSelection.map { ($0.kind == .secretService ? "the Secret Service" : "the embedded store") + ": " + $0.reason }
    }

    /// Creates the keychain; returns the recovery key, formatted for people, to show once.
    public func initialize() throws -> SecureBytes {
        let created = try keys.initialize()
        storeSelection?.commitRecord()
        try settle(created.owed, by: keys, sealsRequired: true)
        return try RecoveryKey.format(created.value.recoveryKey)
    }

    /// Authenticates and caches the unlocked keys.
    public func unlock() throws {
        try settle(keys.unlock().owed, by: keys)
    }

    /// An item another program stored in the Secret Service (secret-tool, libsecret's callers): not
    /// sealed by Keygate, so it has no access control of Keygate's; read as secret-tool reads it.
    public struct ForeignItem: Sendable {
        /// Its attributes, as that program stored them.
        public let attributes: [String: String]
        public let label: String
        public let secret: SecureBytes

        /// As Keygate shows items: a generic password named by its service and account attributes
        /// (secret-tool's `user` for the account), every other attribute an extra.
        public var itemAttributes: ItemAttributes {
            let identity = ItemIdentity.generic(service: attributes["service"] ?? "",
                                                account: attributes["account"] ?? attributes["user"] ?? "")
            return ItemAttributes(identity: identity, label: label,
                                  extras: attributes.filter { ItemAttributes.isExtraName($0.key) })
        }
    }

    /// The items other programs stored in the Secret Service whose attributes include every one of
    /// `attributes` (as `secret-tool lookup` matches), with their secrets. In the embedded store:
    /// the ones keygate-secret-service's clients made (KeychainOperations+SecretService).
    public func foreignItems(matching attributes: [String: String]) throws -> [ForeignItem] {
        if let embedded = store as? EmbeddedStore { return try clientItems(embedded, matching: attributes) }
        guard let secretService = store as? SecretServiceStore else { return [] }
        return try secretService.foreignItems(matching: attributes).map { item in
            var bytes = item.secret
            return ForeignItem(attributes: item.attributes, label: item.label, secret: try SecureBytes(consuming: &bytes))
        }
    }

    /// What `keygate validate` opened or extended, in the keychain policy's terms.
    public struct Validation: Sendable, Equatable {
        /// The reuse window from now, in seconds (0: every read of a gated item still asks).
        public var reuseDuration: UInt32
        public var reuseScope: ReuseScope.Kind
        /// The keychain's lock-after from now, when it is unlocked now.
        public var lockAfter: UInt32?
    }

    /// `keygate validate`, as `sudo -v`: no secret is read. The gatekeeper extends the presence
    /// window of the caller's scope from now when an authentication in it is still fresh, else
    /// authenticates through PAM (the prompt is this process's) and records the window. A locked
    /// keychain is opened with the password typed there (one prompt for both); an unlocked one is
    /// held for its lock-after from now.
    public func validate() throws -> Validation {
        let validated = try keys.validate()
        try settle(validated.owed, by: keys)
        let unlocked = validated.value
        let policy = context.policy
        return Validation(reuseDuration: policy.reuseDuration, reuseScope: ReuseScope.current(policy.reuseScope).kind,
                          lockAfter: unlocked ? policy.lockAfter : nil)
    }

    /// Unlocks with the recovery key.
    public func unlock(recoveryKey: SecureBytes) throws {
        _ = try keys.unlock(recoveryKey: try RecoveryKey.parse(recoveryKey))
    }

    /// Re-wraps the keychain for a password that changed outside Keygate, asking for
    /// the previous password. Current-set items are invalidated.
    public func changePassword() throws {
        try settle(PasswordChange(unlocker: keys).changePassword(), by: keys)
    }

    /// Re-wraps the keychain for the current password using the recovery key, when
    /// the previous password is lost. Returns a note on what was replaced.
    public func resetPassword(recoveryKey: SecureBytes) throws -> String {
        let reset = try PasswordChange(unlocker: keys).resetPassword(recoveryKey: try RecoveryKey.parse(recoveryKey))
        try settle(reset.owed, by: keys)
        return reset.value
    }

    /// Drops the cached keys; returns how many were dropped.
    @discardableResult
    public func lock(all: Bool) -> Int {
        keys.lock(all: all)
    }
}
