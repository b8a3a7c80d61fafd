// Apple's SecKeychainItem: what kSecReturnRef gives for a password item (on macOS, a
// SecKeychainItemRef), alone, in an array for kSecMatchLimitAll, or under kSecValueRef in
// an attributes dictionary; and what kSecValueRef (or kSecMatchItemList) in a query
// matches again. It names one item by its primary key and holds no secret. Delegates the
// model to Keygate's ItemIdentity.
internal import Keygate

/// An opaque reference to one keychain item, as Apple's SecKeychainItem is.
public final class SecKeychainItem: @unchecked Sendable, CustomStringConvertible, Equatable, Hashable {
    // @unchecked: immutable after init; ItemIdentity is a value of Strings and numbers.
    let identity: ItemIdentity

    init(identity: ItemIdentity) {
        self.identity = identity
    }

    public var description: String {
        """
            <SecKeychainItem \(identity.itemClass.rawValue) \
            \(identity.itemClass == .genericPassword ? identity.service : identity.server)/\(identity.account)>
            """
    }

    public static func == (lhs: SecKeychainItem, rhs: SecKeychainItem) -> Bool {
        lhs.identity == rhs.identity
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identity)
    }
}

/// Apple's `SecKeychainItemGetTypeID`.
public func SecKeychainItemGetTypeID() -> CFTypeID { CFTypeIdentifier.keychainItem }
