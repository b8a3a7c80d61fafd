// `keygate validate` (as `sudo -v`): the window extended, or the keychain opened with the
// password PAM takes for it. What the keys say without any authentication is KeyFacts.

extension KeyUnlocker {
    /// The keychain's keys and the gatekeeper's records, asked without a prompt (KeyFacts).
    var facts: KeyFacts { KeyFacts(source: source, gate: gate, dataDirectory: context.dataDirectory) }

    /// `keygate validate`: the gatekeeper extends the presence window of the caller's scope from
    /// now when an authentication in it is still fresh, else authenticates through PAM (the
    /// prompt is this process's) and records the window. A locked keychain is opened with the
    /// password typed there (one prompt for both); an unlocked one is held for its lock-after
    /// from now. Returns whether the keychain is unlocked afterwards, and what its unlock owes.
    func validate() throws -> Unlocked<Bool> {
        let held = source.cachedMaster
        let locked = held == nil && source.isInitialized && source.hasLoginProtector
        let grant = try gate.validate(reason: promptReason(for: .unlock), fresh: locked,
                                      unlocking: locked ? source.recordedClassKeys() ?? [] : nil)
        var owed: [FollowUp] = []
        if locked {
            owed = try opened(grant).owed
        } else if let held {
            hold(held)
        }
        return Unlocked(source.cachedMaster != nil, owed: owed)
    }
}
