// Builds what SecItemCopyMatching (and SecItemAdd, when asked) hands back, in Apple's
// shapes: Data for kSecReturnData alone, a persistent reference for kSecReturnPersistentRef
// alone, a SecKeychainItem for kSecReturnRef alone, otherwise a [String: Any] of kSecAttr* keys (plus kSecValueData and
// kSecValuePersistentRef and kSecValueRef when asked); an array of those for kSecMatchLimitAll or a count.
// Delegates nothing: the attributes come from Keygate's ItemAttributes.
internal import Keygate

enum SecItemResult {
    /// The kSecAttr* key of each item field (SecItemQuery.fieldKeys, inverted).
    private static let fieldKeys: [ItemField: String] = Dictionary(uniqueKeysWithValues: SecItemQuery.fieldKeys.map { ($1, $0) })

    /// The kSecAttr* dictionary Apple returns for an item's attributes: every field of its class
    /// that is set (an unset protocol or authentication type is left out, as on Apple).
    static func attributes(_ a: ItemAttributes) -> [String: Any] {
        var out: [String: Any] = [
            kSecClass: a.identity.itemClass.rawValue,
            kSecAttrAccessible: SecValue.code(of: a.accessibility),
            kSecAttrCreationDate: Date(timeIntervalSince1970: TimeInterval(a.created)),
            kSecAttrModificationDate: Date(timeIntervalSince1970: TimeInterval(a.modified)),
            kSecAttrSynchronizable: a.synchronizable as AnyObject,   // a CFBoolean, as Apple returns
        ]
        for field in ItemField.allCases where field.belongs(to: a.identity.itemClass) {
            guard let key = fieldKeys[field], let value = a[field] else { continue }
            switch field.kind {
            case .code where value.isEmpty: continue
            case .port: out[key] = NSNumber(value: a.identity.port)
            case .bytes: out[key] = Data(a.generic ?? [])
            default: out[key] = value
            }
        }
        if let ac = a.accessControl {
            out[kSecAttrAccessControl] = SecAccessControl(accessibility: a.accessibility, accessControl: ac,
                                                          flags: SecAccessControlCreateFlags(rawValue: UInt(ac.rawValue)))
        }
        return out
    }

    /// One item's result for the query's return keys; nil when nothing was asked.
    static func one(_ a: ItemAttributes, data: Data?, query q: SecItemQuery) -> AnyObject? {
        let asked = [q.returnData, q.returnAttributes, q.returnPersistentRef, q.returnRef].filter { $0 }.count
        if asked == 0 { return nil }
        if asked == 1, q.returnData, let data { return data as AnyObject }
        if asked == 1, q.returnPersistentRef { return SecPersistentRef.data(for: a.identity) as AnyObject }
        if asked == 1, q.returnRef { return SecKeychainItem(identity: a.identity) }
        var dict: [String: Any] = q.returnAttributes ? attributes(a) : [:]
        if q.returnData, let data { dict[kSecValueData] = data }
        if q.returnPersistentRef { dict[kSecValuePersistentRef] = SecPersistentRef.data(for: a.identity) }
        if q.returnRef { dict[kSecValueRef] = SecKeychainItem(identity: a.identity) }
        return dict as AnyObject
    }

    /// The result for several items: Apple's array for kSecMatchLimitAll or a count.
    static func many(_ items: [(ItemAttributes, Data?)], query q: SecItemQuery) -> AnyObject? {
        let values = items.compactMap { one($0.0, data: $0.1, query: q) }
        if values.isEmpty { return nil }
        let asked = [q.returnData, q.returnAttributes, q.returnPersistentRef, q.returnRef].filter { $0 }.count
        if asked == 1 && q.returnRef {
            return values.compactMap { $0 as? SecKeychainItem } as AnyObject
        }
        if asked == 1 && !q.returnAttributes {
            return values.compactMap { $0 as? Data } as AnyObject
        }
        return values.compactMap { $0 as? [String: Any] } as AnyObject
    }
}
