// The operations behind every API call and CLI verb: add, read, list, delete.
// A write seals the secret with its class key and hands the blob to storage; a
// read fetches the blob, finds the class key (cache or PAM unlock) and opens it.
// Listing and deleting never need a key, so they never prompt.
//
// Delegates: storage to Storage/, keys to KeyUnlocker, sealing to Crypto/.

public struct KeychainOperations: Sendable {
    let store: any ItemStore
    let keys: KeyUnlocker

    /// Operations for the calling user, with the given way to prompt.
    public init(prompter: any Prompter, reason: String? = nil) throws {
        let context = try KeychainContext.current()
        self.init(store: SecretServiceStore(deadline: context.storeDeadline),
                  keys: KeyUnlocker(context: context, prompter: prompter, reason: reason))
    }

    init(store: any ItemStore, keys: KeyUnlocker) {
        self.store = store
        self.keys = keys
    }

    /// Seals and stores a secret. With `replace`, an existing item with the same
    /// identity is updated in place; without it, a duplicate is an error, reported
    /// before any prompt.
    public func add(_ attributes: ItemAttributes, secret: SecureBytes, replace: Bool) throws {
        guard secret.count <= SealedBlob.maxSecretLength else {
            throw KeychainError.param("the secret is \(secret.count) bytes, more than the \(SealedBlob.maxSecretLength)-byte limit: store a key or a path to the data instead")
        }
        let existing = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: false)
        if !replace, !existing.isEmpty {
            throw KeychainError.duplicateItem("an item for \(attributes.identity.displayName) already exists: use -U (update) to replace its secret, or delete it first")
        }
        let classKey = try keys.classKey(for: attributes.accessibility, createIfNeeded: true)
        let blob = try SealedBlob.seal(secret, identity: attributes.identity,
                                       accessibility: attributes.accessibility, classKey: classKey)
        try store.create(attributes, blob: blob, replace: replace)
    }

    /// The secret of one item, or nil when there is no such item.
    public func secret(for identity: ItemIdentity) throws -> SecureBytes? {
        guard let item = try store.search(ItemQuery(exactly: identity), loadBlobs: true).first else { return nil }
        guard let blob = item.blob else {
            throw KeychainError.decode("the item \(identity.displayName) has no secret in the store: delete it and add it again")
        }
        let header = try SealedBlob.header(of: blob)
        guard header.accessibility == item.attributes.accessibility else {
            throw KeychainError.decode("the item \(identity.displayName) was tampered with: its accessibility attribute does not match its sealed blob; delete it and add it again")
        }
        let classKey = try keys.classKey(for: header.accessibility, createIfNeeded: false)
        return try SealedBlob.open(blob, identity: identity, classKey: classKey)
    }

    /// The attributes of every matching item, sorted for stable output. Never prompts.
    public func attributes(matching query: ItemQuery) throws -> [ItemAttributes] {
        try store.search(query, loadBlobs: false)
            .map(\.attributes)
            .filter { query.matches($0) }
            .sorted { lhs, rhs in
                (lhs.identity.itemClass.rawValue, lhs.identity.service, lhs.identity.server, lhs.identity.account)
                    < (rhs.identity.itemClass.rawValue, rhs.identity.service, rhs.identity.server, rhs.identity.account)
            }
    }

    /// Deletes every matching item; returns how many. Never prompts.
    @discardableResult
    public func delete(matching query: ItemQuery) throws -> Int {
        try store.delete(query)
    }

    /// Creates the keychain; returns the recovery key, formatted for people, to show once.
    public func initialize() throws -> SecureBytes {
        try RecoveryKey.format(keys.initialize().recoveryKey)
    }

    /// Authenticates and caches the unlocked keys.
    public func unlock() throws {
        try keys.unlock()
    }

    /// Unlocks with the recovery key.
    public func unlock(recoveryKey: SecureBytes) throws {
        try keys.unlock(recoveryKey: try RecoveryKey.parse(recoveryKey))
    }

    /// Drops the cached keys; returns how many were dropped.
    @discardableResult
    public func lock(all: Bool) -> Int {
        keys.lock(all: all)
    }

    /// What `keygate status` reports. Never shows key bytes.
    public func status() -> KeychainStatus {
        let initialized = keys.keyStore.isInitialized
        let entries = keys.cache.entries()
        let master = entries.first { $0.name == KeyUnlocker.masterName }
        let storeStatus: Result<StoreStatus, KeychainError>
        do { storeStatus = .success(try store.status()) } catch let e as KeychainError { storeStatus = .failure(e) } catch {
            storeStatus = .failure(KeychainError.notAvailable("the Secret Service could not be reached"))
        }
        return KeychainStatus(
            user: keys.context.user.name, dataDirectory: keys.context.dataDirectory, initialized: initialized,
            unlocked: master != nil, secondsUntilLock: master?.secondsLeft,
            afterFirstUnlockAvailable: entries.contains { $0.name == KeyUnlocker.afterFirstUnlockName },
            cachedKeys: entries.map { KeychainStatus.CachedKeyInfo(name: $0.name, secondsLeft: $0.secondsLeft) },
            store: try? storeStatus.get().backend, collection: try? storeStatus.get().collection,
            collectionLocked: try? storeStatus.get().locked,
            storeError: { if case .failure(let e) = storeStatus { return e.message } else { return nil } }(),
            lockAfter: keys.context.policy.lockAfter,
            passwordKDF: (try? keys.keyStore.loginKDF())?.map(Self.describe))
    }

    /// The recorded Argon2id cost, e.g. "argon2id13, 2 passes, 256 MiB (493 ms when calibrated)".
    static func describe(_ kdf: KDFParameters) -> String {
        let measured = kdf.calibratedMilliseconds.map { " (\($0) ms when calibrated)" } ?? ""
        return "\(kdf.algorithm), \(kdf.opsLimit) passes, \(kdf.memLimitBytes / (1024 * 1024)) MiB" + measured
    }
}

/// A snapshot of the keychain's state for `keygate status`.
public struct KeychainStatus: Sendable, Codable, Equatable {
    public struct CachedKeyInfo: Sendable, Codable, Equatable {
        public var name: String
        public var secondsLeft: UInt64?
    }
    public var user: String
    public var dataDirectory: String
    public var initialized: Bool
    public var unlocked: Bool
    public var secondsUntilLock: UInt64?
    public var afterFirstUnlockAvailable: Bool
    public var cachedKeys: [CachedKeyInfo]
    public var store: String?
    public var collection: String?
    public var collectionLocked: Bool?
    public var storeError: String?
    public var lockAfter: UInt32
    /// The Argon2id cost recorded in the login-password protector.
    public var passwordKDF: String?
}
