// Apple's CFTypeID, CFOptionFlags and CFHashCode, CFGetTypeID, and the CF…GetTypeID
// functions for the types Keygate aliases (string, data, dictionary, array, number,
// boolean, date, error). Since the aliases are Swift and Foundation types, CFGetTypeID
// looks at the dynamic type of what it is given. Delegates nothing.

/// Apple's `CFTypeID`.
public typealias CFTypeID = UInt
/// Apple's `CFOptionFlags`: `SecAccessControlCreateFlags(rawValue: CFOptionFlags(...))` compiles.
public typealias CFOptionFlags = UInt
/// Apple's `CFHashCode`.
public typealias CFHashCode = UInt

/// The identifiers, fixed for this process as Apple's are (their values differ from Apple's,
/// which Apple documents as not to be relied on across releases).
enum CFTypeIdentifier {
    static let string: CFTypeID = 7
    static let dictionary: CFTypeID = 18
    static let array: CFTypeID = 19
    static let data: CFTypeID = 20
    static let boolean: CFTypeID = 21
    static let number: CFTypeID = 22
    static let error: CFTypeID = 31
    static let date: CFTypeID = 42
    static let accessControl: CFTypeID = 300
    static let keychainItem: CFTypeID = 301
    // 302-306: SecKey, SecCertificate, SecIdentity, SecTrust, SecPolicy (SecUnimplemented.swift).
    /// Anything else (Apple has no such value; no CF… function returns it).
    static let unknown: CFTypeID = 0
}

/// Apple's `CFGetTypeID`: the type of a CoreFoundation object (or of the Swift and Foundation
/// values that stand for them here). nil or a foreign object gives 0, which no CF…GetTypeID returns.
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID {
    guard let cf else { return CFTypeIdentifier.unknown }
    return CFTypeIdentifier.of(cf)
}

extension CFTypeIdentifier {
    /// The identifier of an object's dynamic type (CFGetTypeID's answer).
    static func of(_ cf: AnyObject) -> CFTypeID {
        switch cf {
        case is SecAccessControl: return CFTypeIdentifier.accessControl
        case is SecKeychainItem: return CFTypeIdentifier.keychainItem
        case is CFMutableDictionary: return CFTypeIdentifier.dictionary
        case is NSError: return CFTypeIdentifier.error
        case let n as NSNumber: return CFNumberSupport.isBoolean(n) ? CFTypeIdentifier.boolean : CFTypeIdentifier.number
        case is NSString: return CFTypeIdentifier.string
        case is NSData: return CFTypeIdentifier.data
        case is NSDate: return CFTypeIdentifier.date
        case is NSDictionary: return CFTypeIdentifier.dictionary
        case is NSArray: return CFTypeIdentifier.array
        default: break
        }
        // Swift values boxed by `as AnyObject`.
        let value: Any = cf
        switch value {
        case is String: return CFTypeIdentifier.string
        case is Data: return CFTypeIdentifier.data
        case is Date: return CFTypeIdentifier.date
        case is Bool: return CFTypeIdentifier.boolean
        case is [String: Any], is [AnyHashable: Any]: return CFTypeIdentifier.dictionary
        case is [Any]: return CFTypeIdentifier.array
        case is any BinaryInteger, is any BinaryFloatingPoint: return CFTypeIdentifier.number
        default: return CFTypeIdentifier.unknown
        }
    }
}

/// Apple's `CFStringGetTypeID`.
public func CFStringGetTypeID() -> CFTypeID { CFTypeIdentifier.string }
/// Apple's `CFDataGetTypeID`.
public func CFDataGetTypeID() -> CFTypeID { CFTypeIdentifier.data }
/// Apple's `CFDictionaryGetTypeID`.
public func CFDictionaryGetTypeID() -> CFTypeID { CFTypeIdentifier.dictionary }
/// Apple's `CFArrayGetTypeID`.
public func CFArrayGetTypeID() -> CFTypeID { CFTypeIdentifier.array }
/// Apple's `CFNumberGetTypeID`.
public func CFNumberGetTypeID() -> CFTypeID { CFTypeIdentifier.number }
/// Apple's `CFBooleanGetTypeID`.
public func CFBooleanGetTypeID() -> CFTypeID { CFTypeIdentifier.boolean }
/// Apple's `CFDateGetTypeID`.
public func CFDateGetTypeID() -> CFTypeID { CFTypeIdentifier.date }
/// Apple's `CFErrorGetTypeID`.
public func CFErrorGetTypeID() -> CFTypeID { CFTypeIdentifier.error }
