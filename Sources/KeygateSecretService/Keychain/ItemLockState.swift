// Lock state as a type: an item keygate-secret-service may open now is an UnlockedItem, the
// only value with a way to its secret; a LockedItem says why it is locked and has none, so no
// code path can hand out the secret of a locked item by mistake. A gated item (its sealed blob
// needs a person: user presence, biometry, the current set) is always a LockedItem, whatever the
// keychain's state: the cached keys never open it (docs/DESIGN.md, "The second door").
import Keygate
import KeygateCore

package struct UnlockedItem {
    package let ref: ItemRef
    private let open: () throws -> SecureBytes

    init(ref: ItemRef, open: @escaping () throws -> SecureBytes) {
        self.ref = ref
        self.open = open
    }

    /// The secret, opened now (in locked memory).
    package func secret() throws -> SecureBytes { try open() }
}

package struct LockedItem {
    package let ref: ItemRef
    package let reason: Reason

    package enum Reason: Sendable, Equatable {
        /// The keychain is locked (no master key in the kernel keyring).
        case keychainLocked
        /// The item needs a person for every read: only an authorization (ItemAuthorizer) opens it.
        case gated
    }
}

package enum ItemAccess {
    case unlocked(UnlockedItem)
    case locked(LockedItem)

    package var isLocked: Bool { if case .locked = self { return true } else { return false } }
}

/// What the Secret Service shows of an item (never its secret).
package struct ItemInfo {
    package let ref: ItemRef
    package let collection: String
    package let label: String
    package let attributes: [String: String]
    package let created: UInt64
    package let modified: UInt64
    package let contentType: String
    package let access: ItemAccess
}

/// Where an item is and whether it opens now: all that SearchItems and GetSecrets need. Its label
/// and attributes are left unread (a gated label would be opened for nothing).
package struct ItemEntry {
    package let ref: ItemRef
    package let collection: String
    package let contentType: String
    package let access: ItemAccess
}
