// What one policy-file section sets (or what several sections set once merged), key
// by key, with nil meaning "not set here"; the key names the files use; and where a
// setting came from. Parsing values is PolicyValues' job, merging is PolicyMerge's.

/// What one section (or the merged result) sets; nil = not set here.
public struct PolicySettings: Sendable, Equatable {
    /// The access `keygate add` gives a new item when its creator chose none (`--access` not
    /// given). An empty set means `default-access = none`.
    public var defaultAccess: AccessControl?
    /// The floor: matching items are read with at least this access, whatever they were
    /// created with. An empty set means `minimum-access = none` (no floor).
    public var minimumAccess: AccessControl?
    public var accessible: Accessibility?
    public var reuseDuration: UInt32?
    public var reuseScope: ReuseScope.Kind?
    public var pamService: String?
    public var prompt: String?
    public var maxTries: Int?
    /// Seconds.
    public var lockout: UInt32?
    /// Seconds.
    public var lockAfter: UInt32?
    public var allowNonInteractive: Bool?
    /// Keychain-wide, [default] sections only: the users and `%groups` whose keychain may
    /// have a host protector (empty = nobody). Honoured from system files only.
    public var hostProtector: [String]?
    /// Keychain-wide, [default] sections only: seconds after the last password unlock during
    /// which a finger may reopen the locked keychain (0: never).
    public var fingerUnlock: UInt32?

    public init() {}

    /// Whether `key` is set here.
    public func has(_ key: PolicyKey) -> Bool {
        switch key {
        case .defaultAccess: return defaultAccess != nil
        case .minimumAccess: return minimumAccess != nil
        case .accessible: return accessible != nil
        case .reuseDuration: return reuseDuration != nil
        case .reuseScope: return reuseScope != nil
        case .pamService: return pamService != nil
        case .prompt: return prompt != nil
        case .maxTries: return maxTries != nil
        case .lockout: return lockout != nil
        case .lockAfter: return lockAfter != nil
        case .allowNonInteractive: return allowNonInteractive != nil
        case .hostProtector: return hostProtector != nil
        case .fingerUnlock: return fingerUnlock != nil
        }
    }

    /// Copies `key`'s value (set or not) from `other`.
    mutating func take(_ key: PolicyKey, from other: PolicySettings) {
        switch key {
        case .defaultAccess: defaultAccess = other.defaultAccess
        case .minimumAccess: minimumAccess = other.minimumAccess
        case .accessible: accessible = other.accessible
        case .reuseDuration: reuseDuration = other.reuseDuration
        case .reuseScope: reuseScope = other.reuseScope
        case .pamService: pamService = other.pamService
        case .prompt: prompt = other.prompt
        case .maxTries: maxTries = other.maxTries
        case .lockout: lockout = other.lockout
        case .lockAfter: lockAfter = other.lockAfter
        case .allowNonInteractive: allowNonInteractive = other.allowNonInteractive
        case .hostProtector: hostProtector = other.hostProtector
        case .fingerUnlock: fingerUnlock = other.fingerUnlock
        }
    }
}

/// The keys a policy section may set, by their names in the files.
public enum PolicyKey: String, Sendable, CaseIterable, Hashable {
    case defaultAccess = "default-access"
    case minimumAccess = "minimum-access"
    case accessible
    case reuseDuration = "reuse-duration"
    case reuseScope = "reuse-scope"
    case pamService = "pam-service"
    case prompt
    case maxTries = "max-tries"
    case lockout
    case lockAfter = "lock-after"
    case allowNonInteractive = "allow-non-interactive"
    case hostProtector = "host-protector"
    case fingerUnlock = "finger-unlock"

    /// Keys that apply to the whole keychain, not to items: allowed in [default] only.
    public var isKeychainWide: Bool { self == .hostProtector || self == .fingerUnlock }

    /// `access = LIST` in a file sets both of these (policy files written for Keygate 2.0 have
    /// this one key): what `keygate add` gives a new item and the floor it is read with.
    public static let accessShorthand = "access"
    static let accessShorthandKeys: [PolicyKey] = [.defaultAccess, .minimumAccess]

    /// Every name a file may use: the keys and the `access` shorthand.
    public static var allNames: [String] { [accessShorthand] + allCases.map(\.rawValue) }
}

/// Which folder a policy file came from. Vendor and admin files are "system" files.
public enum PolicyLayer: String, Sendable {
    case vendor, admin, user

    public var isSystem: Bool { self != .user }
}

/// Where one setting came from: the file, the line of the key, the section header as written
/// in canonical form (`[default]`, `[service "vpn*"]`), and the layer. Only the merge makes one
/// (PolicyMerge), so its initializer is the module's own.
public struct PolicyOrigin: Sendable, Equatable {
    public var file: String
    public var line: Int
    public var section: String
    public var layer: PolicyLayer

    /// "FILE:LINE [section]", as `keygate policy explain` prints it.
    public var description: String { "\(file):\(line) \(section)" }
}
