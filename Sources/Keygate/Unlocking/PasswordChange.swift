// `keygate passwd` and `keygate passwd --recovery`: the login password changed without
// Keygate (chpasswd, a root reset, another tool), so the login protector is re-wrapped for
// the current one. The gates are the gatekeeper's, which notices the change in the shadow
// database by itself: current-set items die, every presence item keeps opening, and new
// items are sealed to a new presence generation (docs/GATEKEEPER.md).

struct PasswordChange {
    let unlocker: KeyUnlocker

    /// PAM confirms the current password; the previous one opens the old protector, and the
    /// master key is re-wrapped for the current one. Returns what the unlock with it owes.
    func changePassword() throws -> [FollowUp] {
        let (current, grant) = try authenticateCurrent()
        let user = unlocker.context.userName
        guard let previous = try unlocker.prompter.readSecret(prompt: """
            [keygate] the password Keygate last knew for \(user) (your previous password):\u{20}
            """) else {
            throw KeychainError.userCanceled("canceled: the keychain's password was not changed")
        }
        try unlocker.source.store.changePassword(old: previous, new: current, kdf: nil)
        dropLegacyGateKeys()
        return try unlocker.opened(grant).owed
    }

    /// The previous password is lost: the recovery key opens the master key, which is
    /// re-wrapped for the current password. Returns a note for the person, and what the unlock owes.
    func resetPassword(recoveryKey: SecureBytes) throws -> Unlocked<String> {
        let (current, grant) = try authenticateCurrent()
        let store = unlocker.source.store
        let master = try store.unlock(recoveryKey: recoveryKey)
        let note = try store.resetPassword(masterKey: master, new: current, kdf: nil)
        dropLegacyGateKeys()
        return Unlocked(note, owed: try unlocker.opened(grant).owed)
    }

    /// The current password, through PAM; the same run seals the class keys (the master key
    /// stays the same) and arms the finger unlock.
    private func authenticateCurrent() throws -> (SecureBytes, GateAccess.Grant) {
        let grant = try unlocker.authenticate(purpose: .unlock, unlocking: unlocker.source.recordedClassKeys() ?? [])
        return (try grant.typedPassword(service: unlocker.context.policy.pamService), grant)
    }

    /// Keygate 1.x cached gate keys in the user's keyring; after a change they are the old ones.
    private func dropLegacyGateKeys() {
        let cache = unlocker.source.cache
        for entry in cache.entries() where entry.name.hasPrefix("presence.") || entry.name.hasPrefix("current-set.") {
            cache.evict(entry.name)
        }
        unlocker.authContext?.invalidate()
    }
}
