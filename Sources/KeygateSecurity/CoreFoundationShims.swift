// The CoreFoundation names Keychain code uses, on a platform without CoreFoundation.
// swift-corelibs-foundation does not export CFString, CFDictionary or CFTypeRef, so they
// are spelled here as the Swift types Apple's bridge turns them into: a CFString is a
// String, a CFDictionary a [String: Any], a CFTypeRef any object. That keeps Apple's
// idioms (`kSecClass as String`, `query as CFDictionary`, `var result: AnyObject?`,
// `result as? Data`, `as? [[String: Any]]`) compiling unchanged. Nothing here delegates.

/// A CoreFoundation string; here a Swift String, so `kSecClass as String` is free.
public typealias CFString = String
/// A CoreFoundation dictionary; here `[String: Any]`, so `[CFString: Any]` is the same type
/// and `query as CFDictionary` is an identity cast.
public typealias CFDictionary = [String: Any]
/// A CoreFoundation array; here `[Any]`.
public typealias CFArray = [Any]
/// A CoreFoundation data object; here `Data`.
public typealias CFData = Data
/// Any CoreFoundation object: `var result: CFTypeRef?` and `var result: AnyObject?` are one type.
public typealias CFTypeRef = AnyObject
/// A CoreFoundation error; here an NSError, so `takeRetainedValue() as Error` works.
public typealias CFError = NSError
/// CoreFoundation's index type.
public typealias CFIndex = Int

/// A CoreFoundation allocator. Keygate never allocates through it; it exists so that
/// `SecAccessControlCreateWithFlags(kCFAllocatorDefault, ...)` compiles.
public final class CFAllocator: Sendable {
    fileprivate init() {}
}

/// The default allocator (Apple's `kCFAllocatorDefault`, an implicitly unwrapped optional).
public let kCFAllocatorDefault: CFAllocator! = CFAllocator()

/// A CoreFoundation boolean; here an NSNumber made from a Bool, which is what Apple's bridge
/// turns a CFBoolean into: `as? Bool`, `as? NSNumber`, `== true`, and a Bool put in a query
/// and read back as an NSNumber all behave as on Apple (CFGetTypeID still tells it from a number).
public typealias CFBoolean = NSNumber

/// Apple's `kCFBooleanTrue` and `kCFBooleanFalse`, implicitly unwrapped as in Apple's SDK,
/// so both `kCFBooleanTrue` and `kCFBooleanTrue!` compile. They are the boolean NSNumbers
/// Foundation shares for `true` and `false` (`true as AnyObject === kCFBooleanTrue`).
public let kCFBooleanTrue: CFBoolean! = true as AnyObject as? NSNumber ?? NSNumber(value: true)
public let kCFBooleanFalse: CFBoolean! = false as AnyObject as? NSNumber ?? NSNumber(value: false)

/// Apple's `CFBooleanGetValue`.
public func CFBooleanGetValue(_ boolean: CFBoolean) -> Bool { boolean.boolValue }
