// What kSecAttrAccessGroup means on Linux. Apple's access groups come from a signed app's
// entitlements; Linux has none, so a program declares its groups in KEYGATE_ACCESS_GROUPS
// (comma- or colon-separated, the first being the default, as the first entry of Apple's
// keychain-access-groups is), set by its launcher, .desktop file or systemd unit.
// - Declared groups: an add without kSecAttrAccessGroup goes into the first group; naming
//   a group outside the list is errSecMissingEntitlement; a query without a group sees
//   items in the declared groups and items with no group (stored before groups, or by the
//   keygate CLI), never another group's.
// - No declaration: the program may name any group; a query without a group sees every
//   item, and an item is stored with no group unless one is given.
// Either way, a query that names a group matches only that group's items: two programs
// that pass the same group read each other's items, and a different group does not.
// It sorts items between cooperating programs of one user; it is not a security boundary
// (the same user can read the store directly). Delegates nothing.
import Foundation
internal import Keygate

enum SecAccessGroups {
    /// The groups this process declared (in the environment its edge read), in order; nil when it declared none.
    static func declared(in environment: KeygateEnvironment) -> [String]? {
        environment.accessGroups
    }

    /// errSecMissingEntitlement unless the process may use `group`.
    static func check(_ group: String, declared: [String]?) throws(SecFailure) {
        guard let declared, !declared.contains(group) else { return }
        throw SecFailure(status: errSecMissingEntitlement,
                         message: """
                             this program did not declare the access group \"\(group)\": add it to KEYGATE_ACCESS_GROUPS (now \
                             \"\(declared.joined(separator: ","))\"), as an Apple app adds it to its keychain-access-groups entitlement
                             """)
    }

    /// Whether an item in `group` is visible to a query that names no group.
    static func visible(_ group: String?, declared: [String]?) -> Bool {
        guard let declared, let group else { return true }
        return declared.contains(group)
    }
}
