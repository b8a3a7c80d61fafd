// The effective policy for one item, with where each setting came from. Built by
// PolicyMerge from the defaults and the files; read by the keychain's read path and
// printed by `keygate policy explain`.

/// The effective decision for one item, with where each setting came from (for `policy explain`).
public struct PolicyDecision: Sendable {
    /// The defaults overlaid with the files: lockAfter, reuseDuration, reuseScope, pamService, maxTries, lockoutSeconds.
    public var policy: Policy
    /// The access `keygate add` gives an item whose creator chose none (`default-access`; nil = none).
    /// The library never applies it: an item's access control is its creator's (DESIGN.md).
    public var defaultAccess: AccessControl?
    /// The floor (`minimum-access`; nil = none): an item is sealed, and read, with at least this,
    /// combined with its own by AccessControl.stricter.
    public var minimumAccess: AccessControl?
    /// Accessibility class the policy requires (nil = none); combine by Accessibility.stricter.
    public var accessible: Accessibility?
    /// The reason shown in the PAM prompt (Apple's localizedReason), if the policy sets one.
    public var prompt: String?
    /// Default false.
    public var allowNonInteractive: Bool
    /// Users and `%groups` whose keychain may have a host protector (system files only).
    public var hostProtector: [String] = []
    /// Where each key's value came from; absent = the built-in default.
    public var origins: PolicyKeyMap<PolicyOrigin>
    /// Ignored loosening in a user file (with file:line), ignored broken user files.
    public var warnings: [String]

    public init(policy: Policy = .default, defaultAccess: AccessControl? = nil, minimumAccess: AccessControl? = nil,
                accessible: Accessibility? = nil, prompt: String? = nil, allowNonInteractive: Bool = false,
                origins: PolicyKeyMap<PolicyOrigin> = PolicyKeyMap(), warnings: [String] = []) {
        self.policy = policy
        self.defaultAccess = defaultAccess
        self.minimumAccess = minimumAccess
        self.accessible = accessible
        self.prompt = prompt
        self.allowNonInteractive = allowNonInteractive
        self.origins = origins
        self.warnings = warnings
    }

    /// The decision's value for `key`, as text (`keygate policy explain`).
    public func valueText(_ key: PolicyKey) -> String {
        switch key {
        case .defaultAccess: return defaultAccess.map { $0.policyText } ?? "none"
        case .minimumAccess: return minimumAccess.map { $0.policyText } ?? "none"
        case .accessible: return accessible?.rawValue ?? "(the item's own)"
        case .reuseDuration: return "\(policy.reuseDuration)"
        case .reuseScope: return policy.reuseScope.rawValue
        case .pamService: return policy.pamService
        case .prompt: return prompt.map { "\"\($0)\"" } ?? "(Keygate's own)"
        case .maxTries: return "\(policy.maxTries)"
        case .lockout: return "\(policy.lockoutSeconds)"
        case .lockAfter: return "\(policy.lockAfter)"
        case .fingerUnlock: return "\(policy.fingerUnlock)"
        case .allowNonInteractive: return allowNonInteractive ? "yes" : "no"
        case .hostProtector: return hostProtector.isEmpty ? "none" : hostProtector.joined(separator: ", ")
        }
    }

    /// Whether `host-protector` names the user `name` or one of its `groups`.
    public func enablesHostProtector(user name: String, groups: [String]) -> Bool {
        hostProtector.contains(name) || groups.contains { hostProtector.contains("%" + $0) }
    }
}

extension AccessControl {
    /// The policy-file spelling: "user-presence", "device-passcode,current-set and".
    public var policyText: String {
        if constraints.isEmpty { return "none" }
        // Joined by hand: `joined(separator:)` is not specialised for this array, and its generic
        // body has the runtime walk every conformance record for `Collection` (~150,000
        // instructions), in any read whose policy layers set an access to tighten.
        var text = ""
        for constraint in constraints {
            if !text.isEmpty { text += "," }
            text += constraint.rawValue
        }
        if contains(.or) { text += " or" } else if contains(.and) { text += " and" }
        return text
    }
}
