// Apple's four SecItem functions over Keygate's KeychainOperations, with Apple's rules:
// the class is required; duplicates are judged by primary keys (errSecDuplicateItem);
// a search or update that matches nothing is errSecItemNotFound; update takes attributes
// (and kSecValueData) only; delete removes every match; adding, listing, deleting and
// attribute-only updates never prompt; reading a secret may (PAM, via the item's access
// control). Queries are translated by SecItemQuery, results built by SecItemResult, and
// errors become OSStatus in SecStatusMapping.
internal import Keygate

/// Adds an item. `result` receives what the kSecReturn* keys ask for, as SecItemCopyMatching would.
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecStatusMapping.run {
        let q = try SecItemQuery(attributes)
        let item = try q.newItem()
        var bytes = [UInt8](q.valueData ?? Data())
        let secret = try SecureBytes(consuming: &bytes)
        let operations = try KeygateSecurityConfiguration.operations(for: q)
        try operations.add(item, secret: secret, replace: false)
        if let result {
            let stored = try operations.attributes(matching: ItemQuery(exactly: item.identity)).first ?? item
            result.pointee = SecItemResult.one(stored, data: q.valueData, query: q)
        }
        return errSecSuccess
    }
}

/// Finds items. With no kSecReturn* key it only says whether one exists (never prompts);
/// kSecReturnData reads secrets, which may authenticate.
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecStatusMapping.run {
        let q = try SecItemQuery(query)
        let operations = try KeygateSecurityConfiguration.operations(for: q)
        // Creation order, as Apple's keychain returns kSecMatchLimitAll results.
        var found = try operations.attributesInCreationOrder(matching: q.itemQuery())
        if q.hasExtraFilters { found = found.filter(q.matchesExtra) }
        let limit = q.limit ?? .one
        let wanted: Int
        switch limit {
        case .one: wanted = 1
        case .count(let n): wanted = n
        case .all: wanted = Int.max
        }
        var items: [(ItemAttributes, Data?)] = []
        for attributes in found where items.count < wanted {
            guard q.returnData else { items.append((attributes, nil)); continue }
            do {
                guard let secret = try operations.secret(for: attributes.identity) else { continue }
                items.append((attributes, secret.withUnsafeBytes { Data($0) }))
            } catch let e as KeychainError where e.code == .interactionNotAllowed && q.authenticationUI == .skip {
                continue   // kSecUseAuthenticationUISkip: items that would need a prompt are left out
            }
        }
        guard !items.isEmpty else {
            throw KeychainError(.itemNotFound, """
                no item matches the query: check kSecClass, kSecAttrService and kSecAttrAccount (and kSecAttrSynchronizable: \
                without it only non-synchronizable items match)
                """)
        }
        result?.pointee = limit == .one ? SecItemResult.one(items[0].0, data: items[0].1, query: q)
                                        : SecItemResult.many(items, query: q)
        return errSecSuccess
    }
}

/// Changes every matching item. `attributesToUpdate` holds attributes and kSecValueData only.
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecStatusMapping.run {
        let q = try SecItemQuery(query)
        let u = try SecItemQuery(attributesToUpdate)
        try u.checkAttributes(for: q.requireClass())
        let changes = try u.changes()
        var secret: SecureBytes?
        if let data = u.valueData {
            var bytes = [UInt8](data)
            secret = try SecureBytes(consuming: &bytes)
        }
        let operations = try KeygateSecurityConfiguration.operations(for: q)
        if q.hasExtraFilters {
            let matches = try operations.attributes(matching: q.itemQuery()).filter(q.matchesExtra)
            guard !matches.isEmpty else { throw KeychainError(.itemNotFound, "no item matches the query to update: add it first") }
            for match in matches {
                try operations.update(matching: ItemQuery(exactly: match.identity), set: changes, secret: secret)
            }
        } else {
            try operations.update(matching: q.itemQuery(), set: changes, secret: secret)
        }
        return errSecSuccess
    }
}

/// Deletes every matching item (errSecItemNotFound when there is none). Never prompts.
public func SecItemDelete(_ query: CFDictionary) -> OSStatus {
    SecStatusMapping.run {
        let q = try SecItemQuery(query)
        let operations = try KeygateSecurityConfiguration.operations(for: q)
        var count = 0
        if q.hasExtraFilters {
            for match in try operations.attributes(matching: q.itemQuery()).filter(q.matchesExtra) {
                count += try operations.delete(matching: ItemQuery(exactly: match.identity))
            }
        } else {
            count = try operations.delete(matching: q.itemQuery())
        }
        guard count > 0 else {
            throw KeychainError(.itemNotFound, "no item matches the query to delete: nothing was removed")
        }
        return errSecSuccess
    }
}
