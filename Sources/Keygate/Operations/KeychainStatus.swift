// The snapshot `keygate status`, `keygate doctor` and LAContext read: whether the keychain is
// made and unlocked, which keys are cached and for how long, which store holds the items and
// whether it answers, the policy's windows and the user's lockout; and its JSON, whose field
// order and nulls scripts rely on. Never a key's bytes.
//
// Delegates: the key state to KeyUnlocker's facts, the store's state to the ItemStore.

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
    /// The store in use ("secret-service" or "embedded") and why it was chosen.
    public var storeKind: String?
    public var storeReason: String?
    public var lockAfter: UInt32
    /// The Argon2id cost recorded in the login-password protector.
    public var passwordKDF: String?
    /// Root reset the login password without the old one (protectors/stale): the login
    /// protector still opens with the old password, so login cannot unlock the keychain.
    public var loginStale: Bool = false
    /// How long an authentication for an access-controlled item lasts, and where.
    public var reuseDuration: UInt32
    public var reuseScope: String
    /// The user's one lockout, from root's records: seconds left (0 when none), and the failed
    /// attempts counted since the last success; nil when the gatekeeper could not be asked.
    public var lockoutSecondsLeft: UInt32? = nil
    public var failedAttempts: UInt32? = nil
}

/// The JSON of `keygate status --json`: every field, in this order, nil as null, and the derived
/// `storeAdvice` (storeMismatchAdvice) after `storeReason`. Decoding ignores `storeAdvice`.
extension KeychainStatus {
    enum CodingKeys: String, CodingKey {
        case user, dataDirectory, initialized, unlocked, secondsUntilLock, lockAfter, afterFirstUnlockAvailable
        case cachedKeys, store, collection, collectionLocked, storeError, storeKind, storeReason, storeAdvice
        case passwordKDF, loginStale, reuseDuration, reuseScope, lockoutSecondsLeft, failedAttempts
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(user, forKey: .user)
        try c.encode(dataDirectory, forKey: .dataDirectory)
        try c.encode(initialized, forKey: .initialized)
        try c.encode(unlocked, forKey: .unlocked)
        try c.encode(secondsUntilLock, forKey: .secondsUntilLock)
        try c.encode(lockAfter, forKey: .lockAfter)
        try c.encode(afterFirstUnlockAvailable, forKey: .afterFirstUnlockAvailable)
        try c.encode(cachedKeys, forKey: .cachedKeys)
        try c.encode(store, forKey: .store)
        try c.encode(collection, forKey: .collection)
        try c.encode(collectionLocked, forKey: .collectionLocked)
        try c.encode(storeError, forKey: .storeError)
        try c.encode(storeKind, forKey: .storeKind)
        try c.encode(storeReason, forKey: .storeReason)
        try c.encode(storeMismatchAdvice, forKey: .storeAdvice)
        try c.encode(passwordKDF, forKey: .passwordKDF)
        try c.encode(loginStale, forKey: .loginStale)
        try c.encode(reuseDuration, forKey: .reuseDuration)
        try c.encode(reuseScope, forKey: .reuseScope)
        try c.encode(lockoutSecondsLeft, forKey: .lockoutSecondsLeft)
        try c.encode(failedAttempts, forKey: .failedAttempts)
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            user: try c.decode(String.self, forKey: .user), dataDirectory: try c.decode(String.self, forKey: .dataDirectory),
            initialized: try c.decode(Bool.self, forKey: .initialized), unlocked: try c.decode(Bool.self, forKey: .unlocked),
            secondsUntilLock: try c.decodeIfPresent(UInt64.self, forKey: .secondsUntilLock),
            afterFirstUnlockAvailable: try c.decode(Bool.self, forKey: .afterFirstUnlockAvailable),
            cachedKeys: try c.decode([CachedKeyInfo].self, forKey: .cachedKeys),
            store: try c.decodeIfPresent(String.self, forKey: .store),
            collection: try c.decodeIfPresent(String.self, forKey: .collection),
            collectionLocked: try c.decodeIfPresent(Bool.self, forKey: .collectionLocked),
            storeError: try c.decodeIfPresent(String.self, forKey: .storeError),
            storeKind: try c.decodeIfPresent(String.self, forKey: .storeKind),
            storeReason: try c.decodeIfPresent(String.self, forKey: .storeReason),
            lockAfter: try c.decode(UInt32.self, forKey: .lockAfter),
            passwordKDF: try c.decodeIfPresent(String.self, forKey: .passwordKDF),
            loginStale: try c.decode(Bool.self, forKey: .loginStale),
            reuseDuration: try c.decode(UInt32.self, forKey: .reuseDuration),
            reuseScope: try c.decode(String.self, forKey: .reuseScope),
            lockoutSecondsLeft: try c.decodeIfPresent(UInt32.self, forKey: .lockoutSecondsLeft),
            failedAttempts: try c.decodeIfPresent(UInt32.self, forKey: .failedAttempts))
    }
}

extension KeychainStatus.CachedKeyInfo {
    /// `secondsLeft` is written as null when the key has no timeout.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encode(secondsLeft, forKey: .secondsLeft)
    }
}

extension KeychainStatus {
    /// What `keygate status` and `keygate doctor` say about a stale login protector.
    public static let staleLoginProblem = """
        your password was reset without the old one: the keychain still opens with the old password, so logging in does not \
        unlock it
        """
    public static let staleLoginAdvice = "run `keygate passwd` (it asks the old password), or `keygate passwd --recovery` with the recovery key"

    /// A Secret Service runs and this session reaches it, but it has no default collection (a
    /// first login): its own message says what to do.
    public static func isRunningWithoutDefaultCollection(_ storeError: String) -> Bool {
        storeError.contains(SecretServiceFailure.noDefaultCollectionMarker)
    }

    /// When this keychain's items are in the Secret Service (its recorded store, or a keychain
    /// made before the embedded store) and this session cannot reach it: what to do. nil otherwise.
    public var storeMismatchAdvice: String? {
        guard let storeError, storeKind == StoreKind.secretService.rawValue, initialized,
              !Self.isRunningWithoutDefaultCollection(storeError) else { return nil }
        return "this keychain's items are in the Secret Service: run inside a session that has one ("
            + "\(InstalledTools.secretSession) CMD starts a private one), or, from a session that has it, "
            + "move them with `keygate migrate --to embedded`"
    }
}

extension KeychainStatus {
    /// What `keygate status` reports of `operations`' keychain now. Never shows key bytes.
    public init(of operations: KeychainOperations) {
        let keys = operations.keys, store = operations.store, context = operations.context
        let storeSelection = operations.storeSelection
        let keyState = keys.facts.state()
        let initialized = keyState.initialized
        let entries = keyState.cached
        let master = entries.first { $0.name == KeyUnlocker.masterName }
        let lockout = keyState.lockout
        let storeStatus: Result<StoreStatus, KeychainError>
        do { storeStatus = .success(try store.status()) } catch let e as KeychainError { storeStatus = .failure(e) } catch {
            storeStatus = .failure(KeychainError.notAvailable("the item store could not be reached: run keygate doctor"))
        }
        self.init(
            user: context.userName, dataDirectory: context.dataDirectory, initialized: initialized,
            unlocked: master != nil, secondsUntilLock: master?.secondsLeft,
            afterFirstUnlockAvailable: entries.contains { $0.name == KeyUnlocker.afterFirstUnlockName },
            cachedKeys: entries.map { KeychainStatus.CachedKeyInfo(name: $0.name, secondsLeft: $0.secondsLeft) },
            store: try? storeStatus.get().backend, collection: try? storeStatus.get().collection,
            collectionLocked: try? storeStatus.get().locked,
            storeError: { if case .failure(let e) = storeStatus { return e.message } else { return nil } }(),
            storeKind: storeSelection?.kind.rawValue, storeReason: storeSelection?.reason,
            lockAfter: context.policy.lockAfter,
            passwordKDF: keyState.loginKDF.map(Self.describe),
            loginStale: keyState.loginStale,
            reuseDuration: context.policy.reuseDuration, reuseScope: ReuseScope.current(context.policy.reuseScope).id,
            lockoutSecondsLeft: lockout?.secondsLeft, failedAttempts: lockout?.failedAttempts)
    }

    /// The recorded Argon2id cost, e.g. "argon2id13, 2 passes, 256 MiB (493 ms when calibrated)".
    static func describe(_ kdf: KDFParameters) -> String {
        let measured = kdf.calibratedMilliseconds.map { " (\($0) ms when calibrated)" } ?? ""
        return "\(kdf.algorithm), \(kdf.opsLimit) passes, \(kdf.memLimitBytes / (1024 * 1024)) MiB" + measured
    }
}
