// The loaded policy files, in reading order, and the decision they give for an item.
// Loading never throws: each file's state is recorded (read, refused, error, absent)
// for `keygate policy list`. Deciding fails closed when a system file is unusable.
// Reading is PolicyFileReader's job, the locations PolicyLocations', merging PolicyMerge's.

public struct PolicyFileStatus: Sendable {
    public var path: String
    public var layer: PolicyLayer
    /// "read", "refused: …", "error: file:line:col: …", "absent".
    public var state: String
}

public struct PolicySet: Sendable {
    let loaded: [LoadedPolicyFile]

    init(loaded: [LoadedPolicyFile]) {
        self.loaded = loaded
    }

    /// The three folders, each read lexically (*.policy only): vendor /usr/share/keygate/policies.d then
    /// /usr/local/share/keygate/policies.d, admin /etc/keygate/policies.d, user `home`/.config/keygate/policies.d.
    /// Test-hook builds only: KEYGATE_TEST_POLICY_ROOT (see PolicyLocations). Never throws; failures are recorded.
    public static func load(home: String, uid: UInt32, environment: KeygateEnvironment) -> PolicySet {
        load(folders: PolicyLocations.folders(home: home, environment: environment), uid: uid)
    }

    /// The calling user's set: the user folder under $HOME when it is absolute (user files can only tighten,
    /// so $HOME cannot loosen anything), else the password database's home.
    public static func loadForCurrentUser(environment: KeygateEnvironment) -> PolicySet {
        let uid = ProcessIdentity.uid
        return load(home: (try? KeygatePaths.home(environment: environment, uid: uid)) ?? "/nonexistent", uid: uid,
                    environment: environment)
    }

    /// For tests: these folders, in order; user files must belong to the caller or root.
    public static func load(folders: [(PolicyLayer, String)]) -> PolicySet {
        load(folders: folders, uid: ProcessIdentity.uid)
    }

    static func load(folders: [(PolicyLayer, String)], uid: UInt32) -> PolicySet {
        PolicySet(loaded: folders.flatMap { PolicyFileReader.readFolder($0.1, layer: $0.0, uid: uid) })
    }

    /// Each file (or absent folder) in reading order, with its state.
    public var files: [PolicyFileStatus] {
        loaded.map { PolicyFileStatus(path: $0.path, layer: $0.layer, state: $0.stateText) }
    }

    /// The number of files actually parsed without error.
    public var readCount: Int {
        loaded.filter { if case .parsed = $0.state { return !$0.isBroken } else { return false } }.count
    }

    /// Every problem of the loaded files, one line each ("file:line:col: message", or "file: refused: …").
    public var problems: [String] {
        loaded.flatMap { file -> [String] in
            switch file.state {
            case .absent: return []
            case .refused(let why): return ["\(file.path): refused: \(why)"]
            case .parsed(let parsed): return parsed.errors.map(\.description)
            }
        }
    }

    /// The decision for the item (service, account). Fails CLOSED: throws .notAvailable naming the file when a
    /// vendor or admin file could not be read or parsed. Otherwise merges as PolicyMerge describes.
    public func decision(service: String, account: String) throws -> PolicyDecision {
        try requireUsableSystemFiles()
        return PolicyMerge.decide(loaded) { $0.matches(service: service, account: account) }
    }

    /// The keychain-wide decision (for lock-after and the unlock itself): only sections that match every item.
    public func keychainDecision() throws -> PolicyDecision {
        try requireUsableSystemFiles()
        return PolicyMerge.decide(loaded) { $0.isDefault }
    }

    /// The decision for an item a Secret Service client makes, with these attributes: only
    /// [secret-service] sections count (no [default] or [service] section of Keygate's own items
    /// applies), merged as any decision (a user's file only tightens). `access`: what the item is
    /// sealed with, the stricter of default-access and minimum-access; nil (none) by default.
    public func secretServiceDecision(attributes: [String: String]) throws -> (access: AccessControl?, decision: PolicyDecision) {
        try requireUsableSystemFiles()
        let decision = PolicyMerge.decide(loaded) { $0.secretService?.matches(attributes) == true }
        let access = AccessControl.stricter(decision.defaultAccess, decision.minimumAccess)
        return (access.flatMap { $0.constraints.isEmpty ? nil : $0 }, decision)
    }

    /// `keygate policy check FILE…`: parse these files (syntax only; owner and mode are checked when the set is
    /// loaded) and return every error with file:line:column. Empty = all valid.
    public static func check(paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            switch PolicyFileReader.readForCheck(path) {
            case .failure(let error): return [error.description]
            case .success(let parsed): return parsed.errors.map(\.description)
            }
        }
    }

    private func requireUsableSystemFiles() throws {
        let broken = loaded.filter { $0.layer.isSystem && $0.isBroken }
        guard let first = broken.first else { return }
        let others = broken.count > 1 ? " (and \(broken.count - 1) other system policy file\(broken.count > 2 ? "s" : ""))" : ""
        throw KeychainError.notAvailable("the system policy file \(first.path) cannot be used\(others): \(first.stateText); "
            + "until it is fixed or removed, Keygate refuses to add, change or read items, ungated ones too, since the file "
            + "could have raised their access (listing and deleting still work; run `keygate policy check` as root)")
    }
}
