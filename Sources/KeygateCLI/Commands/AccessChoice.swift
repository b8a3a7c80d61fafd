// Which access control a CLI verb gives the item it stores, and the line that says so.
// As on Apple, the item gets what its creator chose: `--access LIST` or `--access none`.
// Without --access, `keygate add` (and `store`, and the git helper) keeps its sudo-like
// default honestly: an item it replaces keeps the access it is sealed with, a new item
// gets the policy's default-access (shipped: user-presence). The library then raises it to
// any floor (minimum-access); `statement` tells the person what the item got, on stderr.

import Keygate

enum AccessChoice {
    /// Where the access asked for came from.
    enum Source: Equatable {
        /// `--access` on the command line.
        case given
        /// The item being replaced keeps its own.
        case kept
        /// The policy's default-access (the line, or nil for the built-in none).
        case policyDefault(PolicyOrigin?)
        /// A helper's own default for how its tool is used (docs/INTEGRATIONS.md).
        case tool(String)
    }

    /// `--access LIST [--or|--and]`, or `--access none`. nil when --access was not given;
    /// `.some(nil)` for none.
    static func parse(_ list: String?, or: Bool, and: Bool) throws -> AccessControl?? {
        guard let list else { return nil }
        if list.lowercased() == "none" {
            if or || and {
                throw KeychainError(.param, "--access none has no constraints to combine: leave out --or and --and")
            }
            return .some(nil)
        }
        return .some(try AccessControl(parsing: list, or: or, and: and))
    }

    /// The access to ask for: `given` when there is one; else the sealed access of the item
    /// being replaced (`replace`); else the tool's own default (`toolDefault`, a helper's), or
    /// the policy's default-access.
    static func resolve(_ given: AccessControl??, identity: ItemIdentity, replace: Bool, operations: KeychainOperations,
                        toolDefault: (access: AccessControl?, why: String)? = nil) throws -> (AccessControl?, Source) {
        if let given { return (given, .given) }
        if replace, let existing = try operations.sealedAccess(of: identity) { return (existing, .kept) }
        if let toolDefault { return (toolDefault.access, .tool(toolDefault.why)) }
        let fallback = try operations.defaultAccess(for: identity)
        return (fallback.access, .policyDefault(fallback.origin))
    }

    /// One line for stderr: what the item was sealed with, and where that came from.
    static func statement(_ identity: ItemIdentity, _ source: Source, _ result: ItemAccess) -> String {
        let access = ItemAccess.text(result.sealed)
        var why: String
        if let floor = result.raisedBy {
            why = "raised from \(ItemAccess.text(result.requested)) by minimum-access (\(floor.description))"
        } else {
            switch source {
            case .given: why = "as given"
            case .kept: why = "the access it had"
            case .policyDefault(let origin?): why = "the policy's default-access (\(origin.description))"
            case .policyDefault(nil): why = "the policy sets no default-access"
            case .tool(let name): why = name
            }
        }
        if result.sealed == nil {
            why += "; it is read without a password while the keychain is unlocked"
        } else if source != .given, result.raisedBy == nil {
            why += "; --access none stores an item read without a password while the keychain is unlocked"
        }
        let warning = result.neverSatisfied.map { "keygate: warning: \($0)\n" } ?? ""
        return "keygate: stored \(identity.displayName) with access \(access): \(why)\n" + warning
    }
}
