// macOS's legacy keychain calls for generic passwords (SecKeychainAddGenericPassword,
// SecKeychainFindGenericPassword, SecKeychainItemModifyAttributesAndData with data only,
// SecKeychainItemDelete, SecKeychainItemFreeContent), which older macOS wrappers still
// call, as thin translations into SecItem queries; the rest of the legacy API (keychain
// files, internet-password variants, attribute lists, locking) is refused with
// errSecUnimplemented. Delegates everything to SecItem.swift.

/// macOS's keychain-file object. Keygate has one keychain per user; pass nil.
public final class SecKeychain: Sendable { private init() {} }

/// macOS's attribute list, for SecKeychainItemModifyAttributesAndData / FreeContent.
public struct SecKeychainAttribute {
    public var tag: UInt32
    public var length: UInt32
    public var data: UnsafeMutableRawPointer?
    public init(tag: UInt32, length: UInt32, data: UnsafeMutableRawPointer?) {
        self.tag = tag
        self.length = length
        self.data = data
    }
}

public struct SecKeychainAttributeList {
    public var count: UInt32
    public var attr: UnsafeMutablePointer<SecKeychainAttribute>?
    public init(count: UInt32, attr: UnsafeMutablePointer<SecKeychainAttribute>?) {
        self.count = count
        self.attr = attr
    }
}

enum SecKeychainLegacy {
    static func text(_ length: UInt32, _ pointer: UnsafePointer<CChar>?) -> String? {
        guard let pointer else { return nil }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: Int(length))
        return String(decoding: bytes, as: UTF8.self)
    }

    static func refuse() -> OSStatus { SecUnimplemented.status() }

    /// A malloc'd copy with its size in a 16-byte header, so FreeContent can zero it.
    static func copy(_ data: Data) -> UnsafeMutableRawPointer? {
        guard let base = malloc(16 + data.count) else { return nil }
        base.storeBytes(of: data.count, as: Int.self)
        let body = base + 16
        data.withUnsafeBytes { src in
            if let from = src.baseAddress { body.copyMemory(from: from, byteCount: data.count) }
        }
        return body
    }

    static func free(_ body: UnsafeMutableRawPointer) {
        let base = body - 16
        let count = base.load(as: Int.self)
        explicit_bzero(base, 16 + count)   // not elided, unlike a memset before free
        Foundation.free(base)
    }
}

/// macOS's `SecKeychainAddGenericPassword`. `keychain` must be nil (the default keychain).
public func SecKeychainAddGenericPassword(_ keychain: SecKeychain?, _ serviceNameLength: UInt32, _ serviceName: UnsafePointer<CChar>?,
                                          _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                          _ passwordLength: UInt32, _ passwordData: UnsafeRawPointer,
                                          _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    guard keychain == nil else { return SecKeychainLegacy.refuse() }
    let query: [String: Any] = [
        kSecClass: kSecClassGenericPassword,
        kSecAttrService: SecKeychainLegacy.text(serviceNameLength, serviceName) ?? "",
        kSecAttrAccount: SecKeychainLegacy.text(accountNameLength, accountName) ?? "",
        kSecValueData: Data(bytes: passwordData, count: Int(passwordLength)),
        kSecReturnRef: itemRef != nil,
    ]
    var result: CFTypeRef?
    let status = SecItemAdd(query, &result)
    if status == errSecSuccess { itemRef?.pointee = result as? SecKeychainItem }
    return status
}

/// macOS's `SecKeychainFindGenericPassword`. A nil or zero-length service or account
/// matches any. The password is allocated here; free it with SecKeychainItemFreeContent
/// (which zeroes it), and with nothing else.
public func SecKeychainFindGenericPassword(_ keychainOrArray: CFTypeRef?, _ serviceNameLength: UInt32, _ serviceName: UnsafePointer<CChar>?,
                                           _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                           _ passwordLength: UnsafeMutablePointer<UInt32>?,
                                           _ passwordData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                           _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus {
    guard keychainOrArray == nil else { return SecKeychainLegacy.refuse() }
    var query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecReturnAttributes: true]
    if let s = SecKeychainLegacy.text(serviceNameLength, serviceName), !s.isEmpty { query[kSecAttrService] = s }
    if let a = SecKeychainLegacy.text(accountNameLength, accountName), !a.isEmpty { query[kSecAttrAccount] = a }
    if passwordData != nil || passwordLength != nil { query[kSecReturnData] = true }
    if itemRef != nil { query[kSecReturnRef] = true }
    var result: CFTypeRef?
    let status = SecItemCopyMatching(query, &result)
    guard status == errSecSuccess, let found = result as? [String: Any] else { return status }
    if let data = found[kSecValueData] as? Data {
        passwordLength?.pointee = UInt32(data.count)
        if let passwordData {
            guard let buffer = SecKeychainLegacy.copy(data) else { return errSecAllocate }
            passwordData.pointee = buffer
        }
    }
    itemRef?.pointee = found[kSecValueRef] as? SecKeychainItem
    return errSecSuccess
}

/// macOS's `SecKeychainItemFreeContent`: frees (after zeroing) the data Find handed out.
/// Attribute lists are never handed out here, so a non-nil `attrList` is refused.
public func SecKeychainItemFreeContent(_ attrList: UnsafeMutablePointer<SecKeychainAttributeList>?, _ data: UnsafeMutableRawPointer?) -> OSStatus {
    guard attrList == nil else { return SecKeychainLegacy.refuse() }
    if let data { SecKeychainLegacy.free(data) }
    return errSecSuccess
}

/// macOS's `SecKeychainItemModifyAttributesAndData`, for the data only (`attrList` nil);
/// attribute lists are refused with errSecUnimplemented.
public func SecKeychainItemModifyAttributesAndData(_ itemRef: SecKeychainItem, _ attrList: UnsafePointer<SecKeychainAttributeList>?,
                                                   _ length: UInt32, _ data: UnsafeRawPointer?) -> OSStatus {
    guard attrList == nil else { return SecKeychainLegacy.refuse() }
    guard let data else { return errSecSuccess }
    return SecItemUpdate([kSecClass: itemRef.identity.itemClass.rawValue, kSecValueRef: itemRef],
                         [kSecValueData: Data(bytes: data, count: Int(length))])
}

/// macOS's `SecKeychainItemDelete`.
public func SecKeychainItemDelete(_ itemRef: SecKeychainItem) -> OSStatus {
    SecItemDelete([kSecClass: itemRef.identity.itemClass.rawValue, kSecValueRef: itemRef])
}

// MARK: Refused: keychain files, locking, internet-password variants

public func SecKeychainCopyDefault(_ keychain: UnsafeMutablePointer<SecKeychain?>) -> OSStatus { SecKeychainLegacy.refuse() }
public func SecKeychainLock(_ keychain: SecKeychain?) -> OSStatus { SecKeychainLegacy.refuse() }
public func SecKeychainUnlock(_ keychain: SecKeychain?, _ passwordLength: UInt32, _ password: UnsafeRawPointer?,
                              _ usePassword: Bool) -> OSStatus { SecKeychainLegacy.refuse() }
public func SecKeychainSetUserInteractionAllowed(_ state: Bool) -> OSStatus { SecKeychainLegacy.refuse() }
public func SecKeychainAddInternetPassword(_ keychain: SecKeychain?, _ serverNameLength: UInt32, _ serverName: UnsafePointer<CChar>?,
                                           _ securityDomainLength: UInt32, _ securityDomain: UnsafePointer<CChar>?,
                                           _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                           _ pathLength: UInt32, _ path: UnsafePointer<CChar>?, _ port: UInt16,
                                           _ protocol: UInt32, _ authenticationType: UInt32,
                                           _ passwordLength: UInt32, _ passwordData: UnsafeRawPointer,
                                           _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus { SecKeychainLegacy.refuse() }
public func SecKeychainFindInternetPassword(_ keychainOrArray: CFTypeRef?, _ serverNameLength: UInt32, _ serverName: UnsafePointer<CChar>?,
                                            _ securityDomainLength: UInt32, _ securityDomain: UnsafePointer<CChar>?,
                                            _ accountNameLength: UInt32, _ accountName: UnsafePointer<CChar>?,
                                            _ pathLength: UInt32, _ path: UnsafePointer<CChar>?, _ port: UInt16,
                                            _ protocol: UInt32, _ authenticationType: UInt32,
                                            _ passwordLength: UnsafeMutablePointer<UInt32>?,
                                            _ passwordData: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                            _ itemRef: UnsafeMutablePointer<SecKeychainItem?>?) -> OSStatus { SecKeychainLegacy.refuse() }
