// Who is asking, and what is said about it: the one authentication a keychain unlock makes
// through the gatekeeper (root's tries, failure counter and lockout), the reason shown above
// its prompt, LAContext's presence check, and the audit lines about this user.
internal import KeygateGateWire

extension KeyUnlocker {
    /// What an authentication is for, which the prompt says when no reason was given.
    enum Purpose {
        /// Opening the keychain (the master key).
        case unlock
        /// A user-presence or current-set check for reading one item.
        case useItem
    }

    /// The reason shown above the password prompt: the caller's (LAContext's localizedReason,
    /// kSecUseOperationPrompt, the policy's prompt, the command's), else what the check is for,
    /// in the words a Mac uses for an item ("keygate wants to use your confidential information
    /// stored in "vpn" in your keychain.").
    func promptReason(for purpose: Purpose) -> String {
        if let given = authContext?.localizedReason ?? reason { return given }
        guard purpose == .useItem, let item else { return "unlock the keychain" }
        // The item's service (server), else its account; an item with neither is not named
        // (never `stored in ""`).
        let name = [item.itemClass == .genericPassword ? item.service : item.server, item.account].first { !$0.isEmpty }
        guard let name else { return "keygate wants to use your confidential information stored in your keychain." }
        return "keygate wants to use your confidential information stored in \"\(name)\" in your keychain."
    }

    /// One authentication through the gatekeeper (root's tries, failure counter and lockout);
    /// `unlocking`: its password opens the keychain,
    /// and the same run seals these class keys and arms the finger unlock (GateAccess.Grant).
    func authenticate(purpose: Purpose, unlocking: [GateRequest.ClassKey]?) throws -> GateAccess.Grant {
        if authContext?.interactionNotAllowed == true {
            throw KeychainError.interactionNotAllowed("this needs your password, and the authentication context does not allow a prompt")
        }
        if neverPrompt {
            audit(.policyRefusal, service: context.policy.pamService, detail: "allow-non-interactive: no prompt")
            throw KeychainError.interactionNotAllowed("""
                the policy for this item allows no prompt (allow-non-interactive): unlock first (keygate unlock), or see `keygate \
                policy explain`
                """)
        }
        try prompter.ensureAvailable()
        return try gate.authenticate(reason: promptReason(for: purpose), unlocking: unlocking)
    }

    /// LAContext.evaluatePolicy: one presence check now, whose handle serves later reads; with
    /// `biometric`, a finger (the handle then serves biometric items).
    func evaluatePresence(biometric: Bool = false) throws {
        _ = try gate.authenticate(reason: promptReason(for: .useItem), biometric: biometric)
    }

    /// One audit line (Audit/AuditLog.swift) about this user.
    func audit(_ event: AuditEvent, service: String? = nil, detail: String? = nil) {
        UnlockAudit.record(event, service: service, detail: detail, context: context, item: item,
                           reason: authContext?.localizedReason ?? reason)
    }
}

/// The audit lines of an unlock, built from values (the gate's audit closure captures these, not the unlocker).
enum UnlockAudit {
    /// One audit line about `context`'s user and `item`: the unlocker's own, and the gatekeeper's
    /// events relayed into this process's trail (GateAccess).
    static func record(_ event: AuditEvent, service: String?, detail: String?, context: KeychainContext,
                      item: ItemIdentity?, reason: String?) {
        let itemService = item.map { $0.itemClass == .genericPassword ? $0.service : $0.server }
        AuditLog.record(AuditRecord(event: event, user: context.userName, pamService: service, itemService: itemService,
                                    account: item?.account, scope: ReuseScope.current(context.policy.reuseScope).id,
                                    reason: reason, detail: detail))
    }
}
