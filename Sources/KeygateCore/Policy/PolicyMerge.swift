// Merges the sections that match an item into one decision.
//
// 1. System layers (vendor, then admin): among the matching sections, the more specific
//    one wins key by key (specificity: service glob first, then account glob; exact text
//    beats a glob, fewer wildcards beat more, then more literal characters; `*` and
//    [default] are least specific). Between sections of equal specificity (the same
//    match in a later file, or e.g. "vpn*" against "*vpn"), the one read later wins.
//    A key no matching section sets keeps the built-in default (Policy.default).
// 2. User layer: merged the same way among the user's own sections, then each key is
//    compared with the system result and counts only when it is at least as strict;
//    a looser one is ignored with a warning naming file:line. default-access, minimum-access
//    and accessible combine with AccessControl.stricter / Accessibility.stricter, so a user
//    can only add (to the default their own adds get, and to the floor their own items are
//    read with).
//    pam-service cannot be changed by a user; prompt is free (it is only the text shown).
//    host-protector (keychain-wide) can only be turned off by a user (`none`): a user file
//    never enables the host protector, since that would let anyone with a copy of the
//    disk and the host key open the user's keychain without the password.

enum PolicyMerge {
    private struct Entry {
        var section: PolicySection
        var file: String
        var layer: PolicyLayer
        var order: Int
    }

    static func decide(_ files: [LoadedPolicyFile], matching: (PolicySection) -> Bool) -> PolicyDecision {
        var system: [Entry] = [], user: [Entry] = []
        var warnings: [String] = []
        var order = 0
        for file in files {
            switch file.state {
            case .absent: continue
            case .refused:
                if !file.layer.isSystem { warnings.append("ignored user policy file: \(file.stateText)") }
                continue
            case .parsed(let parsed):
                if !parsed.errors.isEmpty {
                    if !file.layer.isSystem { warnings.append("ignored user policy file \(file.path): \(file.stateText)") }
                    continue
                }
                for section in parsed.sections where matching(section) {
                    let entry = Entry(section: section, file: file.path, layer: file.layer, order: order)
                    if file.layer.isSystem { system.append(entry) } else { user.append(entry) }
                    order += 1
                }
            }
        }
        let (base, baseOrigins) = cascade(system)
        var decision = PolicyDecision()
        var origins = baseOrigins
        apply(base, to: &decision)
        let (mine, myOrigins) = cascade(user)
        tighten(&decision, origins: &origins, with: mine, from: myOrigins, warnings: &warnings)
        decision.origins = origins
        decision.warnings = warnings
        return decision
    }

    /// Least specific first, then reading order; later entries override earlier ones key by key.
    private static func cascade(_ entries: [Entry]) -> (PolicySettings, PolicyKeyMap<PolicyOrigin>) {
        let sorted = entries.sorted { a, b in
            let (sa, sb) = (a.section.specificity, b.section.specificity)
            if sa.0 != sb.0 { return sa.0 < sb.0 }
            if sa.1 != sb.1 { return sa.1 < sb.1 }
            return a.order < b.order
        }
        var settings = PolicySettings()
        var origins = PolicyKeyMap<PolicyOrigin>()
        for entry in sorted {
            for key in PolicyKey.allCases where entry.section.settings.has(key) {
                settings.take(key, from: entry.section.settings)
                origins[key] = PolicyOrigin(file: entry.file, line: entry.section.keyLines[key] ?? entry.section.line,
                                            section: entry.section.title, layer: entry.layer)
            }
        }
        return (settings, origins)
    }

    private static func apply(_ s: PolicySettings, to d: inout PolicyDecision) {
        if let v = s.defaultAccess { d.defaultAccess = v.constraints.isEmpty ? nil : v }
        if let v = s.minimumAccess { d.minimumAccess = v.constraints.isEmpty ? nil : v }
        if let v = s.accessible { d.accessible = v }
        if let v = s.reuseDuration { d.policy.reuseDuration = v }
        if let v = s.reuseScope { d.policy.reuseScope = v }
        if let v = s.pamService { d.policy.pamService = v }
        if let v = s.prompt { d.prompt = v }
        if let v = s.maxTries { d.policy.maxTries = v }
        if let v = s.lockout { d.policy.lockoutSeconds = v }
        if let v = s.lockAfter { d.policy.lockAfter = v }
        if let v = s.allowNonInteractive { d.allowNonInteractive = v }
        if let v = s.hostProtector { d.hostProtector = v }
        if let v = s.fingerUnlock { d.policy.fingerUnlock = v }
    }

    private static func tighten(_ d: inout PolicyDecision, origins: inout PolicyKeyMap<PolicyOrigin>,
                                with u: PolicySettings, from userOrigins: PolicyKeyMap<PolicyOrigin>, warnings: inout [String]) {
        for key in PolicyKey.allCases where u.has(key) {
            guard let origin = userOrigins[key] else { continue }
            let before = d.valueText(key)
            var accepted = true
            switch key {
            case .defaultAccess:
                accepted = tighten(&d.defaultAccess, with: u.defaultAccess)
            case .minimumAccess:
                accepted = tighten(&d.minimumAccess, with: u.minimumAccess)
            case .accessible:
                let joined = Accessibility.stricter(d.accessible, u.accessible)
                accepted = joined != d.accessible || joined == u.accessible
                d.accessible = joined
            case .reuseDuration:
                if let v = u.reuseDuration, v <= d.policy.reuseDuration { d.policy.reuseDuration = v } else { accepted = false }
            case .reuseScope:
                if let v = u.reuseScope, v.narrowness >= d.policy.reuseScope.narrowness { d.policy.reuseScope = v } else { accepted = false }
            case .pamService:
                accepted = u.pamService == d.policy.pamService
            case .prompt:
                d.prompt = u.prompt
            case .maxTries:
                if let v = u.maxTries, v <= d.policy.maxTries { d.policy.maxTries = v } else { accepted = false }
            case .lockout:
                if let v = u.lockout, v >= d.policy.lockoutSeconds { d.policy.lockoutSeconds = v } else { accepted = false }
            case .lockAfter:
                if let v = u.lockAfter, v <= d.policy.lockAfter { d.policy.lockAfter = v } else { accepted = false }
            case .allowNonInteractive:
                if u.allowNonInteractive == false || d.allowNonInteractive {
                    d.allowNonInteractive = u.allowNonInteractive ?? false
                } else {
                    accepted = false
                }
            case .hostProtector:
                if u.hostProtector?.isEmpty == true { d.hostProtector = [] } else { accepted = false }
            case .fingerUnlock:
                if let v = u.fingerUnlock, v <= d.policy.fingerUnlock { d.policy.fingerUnlock = v } else { accepted = false }
            }
            if accepted {
                origins[key] = origin
            } else {
                let why = key == .pamService ? "a user policy cannot choose the PAM service"
                    : key == .hostProtector ? """
                        a user policy cannot enable the host protector (only root's files in /etc/keygate/policies.d can; a user may set \
                        `none`)
                        """
                    : "a user policy may only tighten, and this would loosen"
                warnings.append("\(origin.file):\(origin.line): ignored \(key.rawValue) = \(Self.text(key, u)) in \(origin.section): "
                                + "\(why) (the system policy's value is \(before))")
            }
        }
    }

    /// Joins a user's access setting with the system's; false when it asks for nothing stricter
    /// (a user's `none` counts only where the system's is none too).
    private static func tighten(_ system: inout AccessControl?, with user: AccessControl?) -> Bool {
        let wanted = user.flatMap { $0.constraints.isEmpty ? nil : $0 }
        let joined = AccessControl.stricter(system, wanted)
        let accepted = wanted == nil ? system == nil : joined != system
        system = joined
        return accepted
    }

    /// A user setting's value as text, for a warning.
    private static func text(_ key: PolicyKey, _ s: PolicySettings) -> String {
        var d = PolicyDecision()
        apply(s, to: &d)
        return d.valueText(key)
    }
}
