// Apple-style code in the shape of SwiftKeychainWrapper's static helpers, written the way
// older code that grew out of Objective-C is: queries built with CFDictionaryCreateMutable
// and CFDictionarySetValue, results checked with CFGetTypeID and walked with
// CFArrayGetCount / CFArrayGetValueAtIndex, bytes read with CFDataGetBytePtr, numbers
// with CFNumber, and items deleted by the SecKeychainItem ref kSecReturnRef gave.
// Written for Apple's SDK, imports included.
import Foundation
import Security

enum StaticKeychain {
    static var serviceName = "com.example.static"
    static var accessGroup: String?
    private(set) static var lastStatus: OSStatus = noErr

    private static func put(_ dict: CFMutableDictionary, _ key: CFString, _ value: AnyObject) {
        let keyObject = key as AnyObject
        withExtendedLifetime((keyObject, value)) {
            CFDictionarySetValue(dict, Unmanaged.passUnretained(keyObject).toOpaque(),
                                 Unmanaged.passUnretained(value).toOpaque())
        }
    }

    private static func baseQuery(_ key: String?) -> CFMutableDictionary {
        var keyCallBacks = kCFTypeDictionaryKeyCallBacks
        var valueCallBacks = kCFTypeDictionaryValueCallBacks
        let query: CFMutableDictionary = CFDictionaryCreateMutable(kCFAllocatorDefault, 0, &keyCallBacks, &valueCallBacks)
        put(query, kSecClass, kSecClassGenericPassword as AnyObject)
        put(query, kSecAttrService, serviceName as AnyObject)
        if let key = key {
            let cKey = key.utf8CString
            let account: CFString = cKey.withUnsafeBufferPointer { CFStringCreateWithCString(kCFAllocatorDefault, $0.baseAddress, CFStringEncoding(kCFStringEncodingUTF8)) }
            put(query, kSecAttrAccount, account as AnyObject)
        }
        if let group = accessGroup { CFDictionarySetValue(query, kSecAttrAccessGroup, group) }
        return query
    }

    @discardableResult
    static func set(_ value: String, forKey key: String) -> Bool {
        return set(Data(value.utf8), forKey: key)
    }

    @discardableResult
    static func set(_ value: Int, forKey key: String) -> Bool {
        var raw = Int64(value)
        let number: CFNumber = CFNumberCreate(kCFAllocatorDefault, .sInt64Type, &raw)
        return set(Data(number.stringValue.utf8), forKey: key)
    }

    @discardableResult
    static func set(_ data: Data, forKey key: String) -> Bool {
        let query = baseQuery(key)
        let bytes: CFData = data.withUnsafeBytes { raw in
            CFDataCreate(kCFAllocatorDefault, raw.bindMemory(to: UInt8.self).baseAddress, data.count)
        }
        put(query, kSecValueData, bytes as AnyObject)
        var status = SecItemAdd(query, nil)
        if status == errSecDuplicateItem {
            let update: [String: Any] = [kSecValueData as String: data]
            status = SecItemUpdate(baseQuery(key), update as CFDictionary)
        }
        lastStatus = status
        return status == errSecSuccess
    }

    static func data(forKey key: String) -> Data? {
        let query = baseQuery(key)
        put(query, kSecReturnData, kCFBooleanTrue)
        put(query, kSecMatchLimit, kSecMatchLimitOne as AnyObject)
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query, &result)
        guard lastStatus == errSecSuccess, let object = result, CFGetTypeID(object) == CFDataGetTypeID() else { return nil }
        guard let cfData = object as? Data else { return nil }
        let length = CFDataGetLength(cfData)
        guard let pointer = CFDataGetBytePtr(cfData) else { return nil }
        return Data(bytes: pointer, count: length)
    }

    static func string(forKey key: String) -> String? {
        guard let data = data(forKey: key) else { return nil }
        return String(data: data, encoding: .utf8)
    }

    static func integer(forKey key: String) -> Int? {
        guard let text = string(forKey: key), let value = Int64(text) else { return nil }
        let number: CFNumber = NSNumber(value: value)
        var out: Int32 = 0
        guard CFNumberGetValue(number, .sInt32Type, &out) else { return nil }   // refuses what does not fit
        return Int(out)
    }

    static func hasValue(forKey key: String) -> Bool {
        lastStatus = SecItemCopyMatching(baseQuery(key), nil)
        return lastStatus == errSecSuccess
    }

    /// Every account of the service, read from the result array the C way.
    static func allKeys() -> [String] {
        let query = baseQuery(nil)
        put(query, kSecReturnAttributes, kCFBooleanTrue)
        put(query, kSecMatchLimit, kSecMatchLimitAll as AnyObject)
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query, &result)
        guard lastStatus == errSecSuccess, let object = result, CFGetTypeID(object) == CFArrayGetTypeID(),
              let array = object as? [Any] else { return [] }
        var keys: [String] = []
        for i in 0..<CFArrayGetCount(array) {
            guard let pointer = CFArrayGetValueAtIndex(array, i) else { continue }
            let element = Unmanaged<AnyObject>.fromOpaque(pointer).takeUnretainedValue()
            guard CFGetTypeID(element) == CFDictionaryGetTypeID(), let item = element as? [String: Any] else { continue }
            let accountKey = kSecAttrAccount as AnyObject
            let found = withExtendedLifetime(accountKey) { CFDictionaryGetValue(item, Unmanaged.passUnretained(accountKey).toOpaque()) }
            guard let accountPointer = found else { continue }
            let account = Unmanaged<AnyObject>.fromOpaque(accountPointer).takeUnretainedValue()
            if CFGetTypeID(account) == CFStringGetTypeID(), let name = account as? String { keys.append(name) }
        }
        return keys.sorted()
    }

    /// The refs of every item, as SecKeychainItems (kSecReturnRef with kSecMatchLimitAll).
    static func allRefs() -> [SecKeychainItem] {
        let query = baseQuery(nil)
        put(query, kSecReturnRef, kCFBooleanTrue)
        put(query, kSecMatchLimit, kSecMatchLimitAll as AnyObject)
        var result: CFTypeRef?
        lastStatus = SecItemCopyMatching(query, &result)
        guard lastStatus == errSecSuccess, let refs = result as? [SecKeychainItem] else { return [] }
        return refs
    }

    /// macOS code deletes an item through its ref.
    @discardableResult
    static func delete(ref: SecKeychainItem) -> Bool {
        lastStatus = SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref] as CFDictionary)
        return lastStatus == errSecSuccess
    }

    @discardableResult
    static func removeObject(forKey key: String) -> Bool {
        lastStatus = SecItemDelete(baseQuery(key))
        return lastStatus == errSecSuccess
    }

    @discardableResult
    static func removeAllKeys() -> Bool {
        lastStatus = SecItemDelete(baseQuery(nil))
        return lastStatus == errSecSuccess || lastStatus == errSecItemNotFound
    }
}
