// Apple's SecAccessControl: an accessibility class plus access-control flags, made by
// SecAccessControlCreateWithFlags with Apple's validation, and put into a query under
// kSecAttrAccessControl. Delegates the flags' meaning and validation to Keygate's
// AccessControl (same bit values) and the classes to Keygate's Accessibility.
internal import Keygate

/// Apple's SecAccessControlCreateFlags, with Apple's bit values.
public struct SecAccessControlCreateFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }

    public static let userPresence = SecAccessControlCreateFlags(rawValue: 1 << 0)
    public static let biometryAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let touchIDAny = SecAccessControlCreateFlags(rawValue: 1 << 1)
    public static let biometryCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let touchIDCurrentSet = SecAccessControlCreateFlags(rawValue: 1 << 3)
    public static let devicePasscode = SecAccessControlCreateFlags(rawValue: 1 << 4)
    /// Declared for code that names them; Keygate refuses them (errSecParam): Linux has no paired watch.
    public static let watch = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let companion = SecAccessControlCreateFlags(rawValue: 1 << 5)
    public static let or = SecAccessControlCreateFlags(rawValue: 1 << 14)
    public static let and = SecAccessControlCreateFlags(rawValue: 1 << 15)
    /// For private keys in a Secure Enclave; Keygate stores passwords only (errSecParam).
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
    public static let applicationPassword = SecAccessControlCreateFlags(rawValue: 1 << 31)
}

/// An item's accessibility and access control, as Apple's opaque SecAccessControl.
public final class SecAccessControl: Sendable, CustomStringConvertible {
    let accessibility: Accessibility
    /// nil when the flags name no constraint (Apple accepts an empty flag set: the class alone).
    let accessControl: AccessControl?
    public let flags: SecAccessControlCreateFlags

    init(accessibility: Accessibility, accessControl: AccessControl?, flags: SecAccessControlCreateFlags) {
        self.accessibility = accessibility
        self.accessControl = accessControl
        self.flags = flags
    }

    public var description: String {
        "<SecAccessControl \(accessibility.rawValue) \(accessControl?.attributeValue ?? "no constraint")>"
    }
}

/// Apple's SecAccessControlCreateWithFlags. `protection` is a kSecAttrAccessible value.
/// Returns nil and sets `error` (NSOSStatusErrorDomain, errSecParam) for an unknown class,
/// flags Keygate cannot honour, or Apple's invalid combinations (and with or, both
/// biometry flags, userPresence with another constraint).
public func SecAccessControlCreateWithFlags(_ allocator: CFAllocator?, _ protection: Any,
                                            _ flags: SecAccessControlCreateFlags,
                                            _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl? {
    func fail(_ message: String) -> SecAccessControl? {
        SecLastFailure.record(errSecParam, message)
        error?.pointee = Unmanaged.passRetained(NSError(domain: NSOSStatusErrorDomain, code: Int(errSecParam),
                                                        userInfo: [NSLocalizedDescriptionKey: message]))
        return nil
    }
    guard let code = SecValue.string(protection), let accessibility = SecValue.accessibility(code) else {
        return fail("the protection is not a kSecAttrAccessible value: pass kSecAttrAccessibleWhenUnlocked or another kSecAttrAccessible constant")
    }
    guard flags.rawValue <= UInt(UInt32.max) else {
        return fail("""
            access control has flag bits Keygate does not support: use userPresence, devicePasscode, biometryAny or \
            biometryCurrentSet, with .or/.and
            """)
    }
    let control = AccessControl(rawValue: UInt32(flags.rawValue))
    if control.constraints.isEmpty && control.subtracting([.or, .and]).isEmpty && !control.contains([.or, .and]) {
        return SecAccessControl(accessibility: accessibility, accessControl: nil, flags: flags)
    }
    do {
        try control.validate()
    } catch let e as KeychainError {
        return fail(e.message)
    } catch {
        return fail("the access-control flags are not valid")
    }
    return SecAccessControl(accessibility: accessibility, accessControl: control, flags: flags)
}

/// Apple's `SecAccessControlGetTypeID`: what CFGetTypeID gives for a SecAccessControl.
public func SecAccessControlGetTypeID() -> CFTypeID { CFTypeIdentifier.accessControl }
