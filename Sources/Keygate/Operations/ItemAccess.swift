// Whose access control an item gets (DESIGN.md, "Whose access control"): its creator's,
// as on Apple. The library seals what the creator asked for (none is none), raised to the
// policy's floor (`minimum-access`) where one matches. The CLI, which keeps a sudo-like
// default, asks here for the policy's `default-access` when `--access` was not given, and
// states what the item got from the ItemAccess an add returns.

/// The access control an added item was sealed with, and where each part of it came from.
public struct ItemAccess: Sendable, Equatable {
    /// What the creator asked for (nil = none).
    public var requested: AccessControl?
    /// What the item was sealed with: `requested`, raised to the floor (nil = none).
    public var sealed: AccessControl?
    /// The policy line of the floor that raised `requested`, when one did.
    public var raisedBy: PolicyOrigin?
    /// Why this keychain can never satisfy `sealed` (no password protector to authenticate
    /// with: a host-protected service account), or nil.
    public var neverSatisfied: String?

    public init(requested: AccessControl?, sealed: AccessControl?, raisedBy: PolicyOrigin?, neverSatisfied: String? = nil) {
        self.requested = requested
        self.sealed = sealed
        self.raisedBy = raisedBy
        self.neverSatisfied = neverSatisfied
    }

    /// The policy text of an access control: "none", "user-presence", "device-passcode,current-set and".
    public static func text(_ access: AccessControl?) -> String { access?.policyText ?? "none" }
}

/// The policy's `default-access` for one item, and the line it came from (nil: the built-in none).
public struct DefaultAccess: Sendable, Equatable {
    public var access: AccessControl?
    public var origin: PolicyOrigin?
}

extension KeychainOperations {
    /// The access `keygate add` gives `identity` when `--access` is not given: the policy's
    /// `default-access` (shipped: user-presence). Fails closed, as an add does, when a system
    /// policy file cannot be used.
    public func defaultAccess(for identity: ItemIdentity) throws -> DefaultAccess {
        let decision = try context.decision(for: identity)
        return DefaultAccess(access: decision.defaultAccess, origin: decision.origins[.defaultAccess])
    }

    /// What an item asked for `requested` is sealed with under `decision`: raised to the floor;
    /// and whether this keychain can ever satisfy it.
    func access(requested: AccessControl?, decision: PolicyDecision) -> ItemAccess {
        let requested = requested.flatMap { $0.constraints.isEmpty ? nil : $0 }
        let sealed = AccessControl.stricter(requested, decision.minimumAccess)
        var never: String?
        if sealed != nil, (try? keys.requirePasswordProtector()) == nil {
            never = """
                the keychain of \(context.userName) has no password protector (only the host protector and the recovery key \
                open it), so nothing can ever satisfy \(ItemAccess.text(sealed)) and every read of this item will fail (exit 36): \
                store it with --access none, or give it default-access = none and no minimum-access in a system policy
                """
        }
        return ItemAccess(requested: requested, sealed: sealed,
                          raisedBy: sealed == requested ? nil : decision.origins[.minimumAccess], neverSatisfied: never)
    }
}

extension KeychainOperations {
    /// The access control the item with exactly `identity` is sealed with: nil when there is no
    /// such item, `.some(nil)` for an item with none. Read from its blob, never from the stored
    /// attribute; a mismatch throws .decode (tampering). Never prompts.
    public func sealedAccess(of identity: ItemIdentity) throws -> AccessControl?? {
        try ItemFieldLimits.check(identity: identity)
        guard let item = try storedItem(identity) else { return nil }
        return .some(try ReadNeed.sealedAccess(of: item, identity: identity))
    }
}
