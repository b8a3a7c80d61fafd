// Apple's CFDictionary functions for code that builds a keychain query the C way:
// CFDictionaryCreateMutable with the kCFType callbacks, CFDictionarySetValue /
// AddValue / RemoveValue, CFDictionaryGetValue / GetCount / ContainsKey, and the SecItem
// functions taking the CFMutableDictionary. Keys and values are CoreFoundation objects
// passed as raw pointers, as on Apple (`Unmanaged.passUnretained(x as AnyObject).toOpaque()`).
// A CFString constant is a Swift String here, so `kSecClass as AnyObject` is a temporary
// object: keep it alive across the call (withExtendedLifetime), or pass the CFString
// itself, which every function here also accepts. Delegates storage to a Swift dictionary and
// the SecItem calls to SecItem.swift.

/// Apple's `CFDictionaryKeyCallBacks`. Keygate's dictionaries always retain, compare and
/// hash their keys as CoreFoundation objects (the kCFType behaviour), whatever is passed.
public struct CFDictionaryKeyCallBacks: Sendable {
    public var version: CFIndex
    public init() { version = 0 }
}

/// Apple's `CFDictionaryValueCallBacks`; as above, values are always retained.
public struct CFDictionaryValueCallBacks: Sendable {
    public var version: CFIndex
    public init() { version = 0 }
}

/// Apple's kCFType callbacks, for `CFDictionaryCreateMutable(nil, 0, [kCFTypeDictionaryKeyCallBacks], ...)`
/// or `var k = kCFTypeDictionaryKeyCallBacks` then `&k`.
public let kCFTypeDictionaryKeyCallBacks = CFDictionaryKeyCallBacks()
public let kCFTypeDictionaryValueCallBacks = CFDictionaryValueCallBacks()
public let kCFCopyStringDictionaryKeyCallBacks = CFDictionaryKeyCallBacks()

/// Apple's `CFMutableDictionary`: a dictionary with reference semantics, as C code shares it.
public final class CFMutableDictionary: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: as on Apple, a mutable dictionary is not safe to mutate from two threads.
    var entries: [AnyHashable: AnyObject] = [:]
    fileprivate init() {}

    /// The dictionary as SecItem reads it; a key that is not a string keeps a name that
    /// SecItemQuery refuses (errSecParam), so it is never silently dropped.
    var swiftDictionary: [String: Any] {
        var out: [String: Any] = [:]
        for (k, v) in entries {
            out[(k.base as? String) ?? "non-string key \(k)"] = v
        }
        return out
    }

    public var description: String { String(describing: swiftDictionary) }
}

enum CFDictionarySupport {
    static func key(_ pointer: UnsafeRawPointer) -> AnyHashable {
        let object = CFInteriorPointers.object(at: pointer)
        if let s = object as? String { return s }
        if let h = object as? AnyHashable { return h }
        return ObjectIdentifier(object)
    }
}

/// Apple's `CFDictionaryCreateMutable`. `capacity` is a hint, as on Apple.
public func CFDictionaryCreateMutable(_ allocator: CFAllocator!, _ capacity: CFIndex,
                                      _ keyCallBacks: UnsafePointer<CFDictionaryKeyCallBacks>!,
                                      _ valueCallBacks: UnsafePointer<CFDictionaryValueCallBacks>!) -> CFMutableDictionary! {
    CFMutableDictionary()
}

/// Apple's `CFDictionarySetValue`: `key` and `value` point at CoreFoundation objects.
public func CFDictionarySetValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!, _ value: UnsafeRawPointer!) {
    guard let theDict, let key else { return }
    let k = CFDictionarySupport.key(key)
    if let value { theDict.entries[k] = CFInteriorPointers.object(at: value) } else { theDict.entries[k] = nil }
}

/// `CFDictionarySetValue` with a CFString key (a Swift String here) and any value: what
/// `CFDictionarySetValue(query, kSecClass, kSecClassGenericPassword)` resolves to.
public func CFDictionarySetValue(_ theDict: CFMutableDictionary!, _ key: CFString, _ value: Any?) {
    guard let theDict else { return }
    guard let value = value.flatMap(SecValue.unwrapped) else { theDict.entries[key] = nil; return }
    if let p = value as? UnsafeRawPointer {
        theDict.entries[key] = CFInteriorPointers.object(at: p)
    } else if let p = value as? UnsafeMutableRawPointer {
        theDict.entries[key] = CFInteriorPointers.object(at: p)
    } else {
        theDict.entries[key] = value as AnyObject
    }
}

/// Apple's `CFDictionaryAddValue`: sets the value only when the key is absent.
public func CFDictionaryAddValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!, _ value: UnsafeRawPointer!) {
    guard let theDict, let key else { return }
    if theDict.entries[CFDictionarySupport.key(key)] == nil { CFDictionarySetValue(theDict, key, value) }
}

/// Apple's `CFDictionaryRemoveValue`.
public func CFDictionaryRemoveValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!) {
    guard let theDict, let key else { return }
    theDict.entries[CFDictionarySupport.key(key)] = nil
}

/// `CFDictionaryRemoveValue` with a CFString key.
public func CFDictionaryRemoveValue(_ theDict: CFMutableDictionary!, _ key: CFString) {
    theDict?.entries[key] = nil
}

/// `CFDictionaryContainsKey` with a CFString key.
public func CFDictionaryContainsKey(_ theDict: CFMutableDictionary!, _ key: CFString) -> Bool {
    theDict?.entries[key] != nil
}

/// Apple's `CFDictionaryGetValue` on a mutable dictionary: a pointer to the stored object
/// (valid while the dictionary holds it, as on Apple), or nil.
public func CFDictionaryGetValue(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!) -> UnsafeRawPointer! {
    guard let theDict, let key, let v = theDict.entries[CFDictionarySupport.key(key)] else { return nil }
    return UnsafeRawPointer(Unmanaged.passUnretained(v).toOpaque())
}

/// Apple's `CFDictionaryGetValue` on a CFDictionary (a `[String: Any]` here, such as a
/// SecItemCopyMatching result). Linux difference: the object is kept by CFInteriorPointers.
public func CFDictionaryGetValue(_ theDict: CFDictionary!, _ key: UnsafeRawPointer!) -> UnsafeRawPointer! {
    guard let theDict, let key, let name = CFDictionarySupport.key(key).base as? String,
          let raw = theDict[name], let v = SecValue.unwrapped(raw) else { return nil }
    return CFInteriorPointers.pointer(to: v as AnyObject)
}

/// `CFDictionaryGetValue` with a CFString key, for either kind of dictionary.
public func CFDictionaryGetValue(_ theDict: CFMutableDictionary!, _ key: CFString) -> UnsafeRawPointer! {
    guard let theDict, let v = theDict.entries[key] else { return nil }
    return UnsafeRawPointer(Unmanaged.passUnretained(v).toOpaque())
}

public func CFDictionaryGetValue(_ theDict: CFDictionary!, _ key: CFString) -> UnsafeRawPointer! {
    guard let theDict, let raw = theDict[key], let v = SecValue.unwrapped(raw) else { return nil }
    return CFInteriorPointers.pointer(to: v as AnyObject)
}

/// Apple's `CFDictionaryGetCount`.
public func CFDictionaryGetCount(_ theDict: CFMutableDictionary!) -> CFIndex { theDict?.entries.count ?? 0 }
public func CFDictionaryGetCount(_ theDict: CFDictionary!) -> CFIndex { theDict?.count ?? 0 }

/// Apple's `CFDictionaryContainsKey`.
public func CFDictionaryContainsKey(_ theDict: CFMutableDictionary!, _ key: UnsafeRawPointer!) -> Bool {
    guard let theDict, let key else { return false }
    return theDict.entries[CFDictionarySupport.key(key)] != nil
}

// MARK: SecItem with a dictionary built the C way (on Apple a CFMutableDictionary is a CFDictionary)

public func SecItemAdd(_ attributes: CFMutableDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemAdd(attributes.swiftDictionary, result)
}

public func SecItemCopyMatching(_ query: CFMutableDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    SecItemCopyMatching(query.swiftDictionary, result)
}

public func SecItemUpdate(_ query: CFMutableDictionary, _ attributesToUpdate: CFMutableDictionary) -> OSStatus {
    SecItemUpdate(query.swiftDictionary, attributesToUpdate.swiftDictionary)
}

public func SecItemUpdate(_ query: CFMutableDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus {
    SecItemUpdate(query.swiftDictionary, attributesToUpdate)
}

public func SecItemDelete(_ query: CFMutableDictionary) -> OSStatus {
    SecItemDelete(query.swiftDictionary)
}
