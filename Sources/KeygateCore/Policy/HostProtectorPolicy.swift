// Whether the system policy lets an account have a host protector: the keychain-wide
// `host-protector` setting of root-owned policy files ([default] sections), naming the
// user or one of its `%groups`. A user's own file can never turn it on. Fails closed:
// an unusable system file means "no". Reading the files is PolicySet's job, the
// account and its groups AccountEntry's.

package enum HostProtectorPolicy {
    /// The keychain-wide decision for `account`'s keychain, read as root would read it.
    package static func decision(for account: AccountEntry, environment: KeygateEnvironment) throws -> PolicyDecision {
        try PolicySet.load(home: account.home, uid: account.uid, environment: environment).keychainDecision()
    }

    /// True when `decision` enables the host protector for `account`.
    package static func enables(_ decision: PolicyDecision, _ account: AccountEntry) -> Bool {
        if decision.enablesHostProtector(user: account.name, groups: []) { return true }
        guard decision.hostProtector.contains(where: { $0.hasPrefix("%") }) else { return false }
        return decision.enablesHostProtector(user: account.name, groups: (try? account.groupNames()) ?? [])
    }

    /// The decision, or `.param` saying how to enable the host protector when the
    /// policy does not name `account`.
    package static func require(_ account: AccountEntry, environment: KeygateEnvironment) throws -> PolicyDecision {
        let decision = try decision(for: account, environment: environment)
        guard enables(decision, account) else {
            throw KeychainError.param("""
                the policy does not enable the host protector for \(account.name): as root, add `host-protector = \(account.name)` \
                (or a %group it is in) to the [default] section of a file in /etc/keygate/policies.d (see man 5 keygate.policy); a \
                user's own policy file cannot enable it
                """)
        }
        return decision
    }
}
