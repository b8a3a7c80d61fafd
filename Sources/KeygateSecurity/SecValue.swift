// Reads the loosely typed values Apple code puts in a query ([String: Any]): booleans as
// Bool, CFBoolean or NSNumber; numbers of any integer type; strings and data as Swift or
// Foundation objects; implicitly unwrapped optionals (kCFBooleanTrue is `CFBoolean!`, and
// stored in an Any it stays an Optional). Delegates class codes to Keygate's Accessibility.
internal import Keygate

enum SecValue {
    /// The value inside any number of Optional layers, or nil for a nil one.
    static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        guard let inner = mirror.children.first?.value else { return nil }
        return unwrapped(inner)
    }

    static func bool(_ raw: Any) -> Bool? {
        guard let value = unwrapped(raw) else { return nil }
        if let b = value as? Bool { return b }
        if let n = value as? NSNumber { return n.boolValue }   // CFBoolean is one
        if let i = integer(value) { return i != 0 }
        return nil
    }

    static func integer(_ raw: Any) -> Int? {
        guard let value = unwrapped(raw) else { return nil }
        if let i = value as? any BinaryInteger { return Int(exactly: i) }
        if let n = value as? NSNumber { return n.intValue }
        if let s = value as? String { return Int(s) }
        return nil
    }

    static func string(_ raw: Any) -> String? {
        guard let value = unwrapped(raw) else { return nil }
        if let s = value as? String { return s }
        if let s = value as? NSString { return s.description }
        return nil
    }

    static func data(_ raw: Any) -> Data? {
        guard let value = unwrapped(raw) else { return nil }
        if let d = value as? Data { return d }
        if let d = value as? NSData { return Data(referencing: d) }
        if let bytes = value as? [UInt8] { return Data(bytes) }
        return nil
    }

    static func date(_ raw: Any) -> Date? {
        guard let value = unwrapped(raw) else { return nil }
        if let d = value as? Date { return d }
        if let d = value as? NSDate { return Date(timeIntervalSince1970: d.timeIntervalSince1970) }
        return nil
    }

    /// A kSecAttrAccessible code as Keygate's class. The deprecated "Always" classes map to
    /// after-first-unlock, the nearest Keygate has.
    static func accessibility(_ code: String) -> Accessibility? {
        switch code {
        case kSecAttrAccessibleWhenUnlocked: return .whenUnlocked
        case kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways: return .afterFirstUnlock
        case kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly: return .whenPasscodeSetThisDeviceOnly
        case kSecAttrAccessibleWhenUnlockedThisDeviceOnly: return .whenUnlockedThisDeviceOnly
        case kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAlwaysThisDeviceOnly:
            return .afterFirstUnlockThisDeviceOnly
        default: return nil
        }
    }

    static func code(of accessibility: Accessibility) -> String {
        switch accessibility {
        case .whenUnlocked: return kSecAttrAccessibleWhenUnlocked
        case .afterFirstUnlock: return kSecAttrAccessibleAfterFirstUnlock
        case .whenPasscodeSetThisDeviceOnly: return kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly
        case .whenUnlockedThisDeviceOnly: return kSecAttrAccessibleWhenUnlockedThisDeviceOnly
        case .afterFirstUnlockThisDeviceOnly: return kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
        }
    }
}
