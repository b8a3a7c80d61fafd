// Apple's CFNumber (here Foundation's NSNumber, as toll-free bridging makes it on Apple),
// CFNumberType with Apple's raw values, and CFNumberCreate / CFNumberGetValue /
// CFNumberGetType for the common types. Conversions follow Apple: GetValue stores the
// nearest value and returns false when it was not exact. Delegates storage to NSNumber.

/// Apple's `CFNumber`.
public typealias CFNumber = NSNumber

/// Apple's `CFNumberType`, with Apple's raw values.
public enum CFNumberType: CFIndex, Sendable {
    case sInt8Type = 1
    case sInt16Type = 2
    case sInt32Type = 3
    case sInt64Type = 4
    case float32Type = 5
    case float64Type = 6
    case charType = 7
    case shortType = 8
    case intType = 9
    case longType = 10
    case longLongType = 11
    case floatType = 12
    case doubleType = 13
    case cfIndexType = 14
    case nsIntegerType = 15
    case cgFloatType = 16
    public static let maxType = CFNumberType.cgFloatType
}

enum CFNumberSupport {
    /// NSNumbers made from a Bool (Apple's CFBoolean) are of Foundation's private boolean subclass (`__NSCFBoolean`).
    static func isBoolean(_ n: NSNumber) -> Bool {
        String(describing: type(of: n)).contains("Bool")
    }

    static func isFloat(_ n: NSNumber) -> Bool {
        let code = String(cString: n.objCType)
        return code == "f" || code == "d"
    }

    /// The byte width and kind of a CFNumberType.
    static func layout(_ type: CFNumberType) -> (bytes: Int, float: Bool) {
        switch type {
        case .sInt8Type, .charType: return (1, false)
        case .sInt16Type, .shortType: return (2, false)
        case .sInt32Type, .intType: return (4, false)
        case .sInt64Type, .longType, .longLongType, .cfIndexType, .nsIntegerType: return (8, false)
        case .float32Type, .floatType: return (4, true)
        case .float64Type, .doubleType, .cgFloatType: return (8, true)
        }
    }
}

/// Apple's `CFNumberCreate`: reads one value of `theType` at `valuePtr`.
public func CFNumberCreate(_ allocator: CFAllocator!, _ theType: CFNumberType, _ valuePtr: UnsafeRawPointer!) -> CFNumber! {
    guard let p = valuePtr else { return nil }
    switch theType {
    case .sInt8Type, .charType: return NSNumber(value: p.loadUnaligned(as: Int8.self))
    case .sInt16Type, .shortType: return NSNumber(value: p.loadUnaligned(as: Int16.self))
    case .sInt32Type, .intType: return NSNumber(value: p.loadUnaligned(as: Int32.self))
    case .sInt64Type, .longType, .longLongType, .cfIndexType, .nsIntegerType: return NSNumber(value: p.loadUnaligned(as: Int64.self))
    case .float32Type, .floatType: return NSNumber(value: p.loadUnaligned(as: Float.self))
    case .float64Type, .doubleType, .cgFloatType: return NSNumber(value: p.loadUnaligned(as: Double.self))
    }
}

/// Apple's `CFNumberGetType`: the type the number was stored as (unsigned and plain C
/// types are reported as the signed fixed-width type that holds them, as on Apple).
public func CFNumberGetType(_ number: CFNumber!) -> CFNumberType {
    guard let number else { return .sInt32Type }
    switch String(cString: number.objCType) {
    case "c", "C": return .sInt8Type
    case "s": return .sInt16Type
    case "S", "i": return .sInt32Type
    case "f": return .float32Type
    case "d": return .float64Type
    default: return .sInt64Type
    }
}

/// Apple's `CFNumberIsFloatType`.
public func CFNumberIsFloatType(_ number: CFNumber!) -> Bool {
    number.map(CFNumberSupport.isFloat) ?? false
}

/// Apple's `CFNumberGetByteSize`: the size of the type `CFNumberGetType` reports.
public func CFNumberGetByteSize(_ number: CFNumber!) -> CFIndex {
    CFNumberSupport.layout(CFNumberGetType(number)).bytes
}

/// Apple's `CFNumberGetValue`: stores the value as `theType` at `valuePtr`. Returns false
/// when the stored value is not exact (a fraction dropped, or out of range), as Apple does.
public func CFNumberGetValue(_ number: CFNumber!, _ theType: CFNumberType, _ valuePtr: UnsafeMutableRawPointer!) -> Bool {
    guard let number, let p = valuePtr else { return false }
    let source = number.doubleValue
    let integral = CFNumberSupport.isFloat(number) ? nil : number.int64Value
    func store<T: FixedWidthInteger>(_: T.Type) -> Bool {
        if let i = integral {
            let v = T(truncatingIfNeeded: i)
            p.storeBytes(of: v, as: T.self)
            return Int64(exactly: v) == i
        }
        guard source.isFinite else { p.storeBytes(of: T.zero, as: T.self); return false }
        let clamped = min(max(source.rounded(.towardZero), Double(T.min)), Double(T.max))
        let v = T(exactly: clamped) ?? (clamped < 0 ? T.min : T.max)
        p.storeBytes(of: v, as: T.self)
        return Double(v) == source
    }
    switch theType {
    case .sInt8Type, .charType: return store(Int8.self)
    case .sInt16Type, .shortType: return store(Int16.self)
    case .sInt32Type, .intType: return store(Int32.self)
    case .sInt64Type, .longType, .longLongType, .cfIndexType, .nsIntegerType: return store(Int64.self)
    case .float32Type, .floatType:
        let value = integral.map { Double($0) } ?? source
        let f = Float(value)
        p.storeBytes(of: f, as: Float.self)
        return Double(f) == value || value.isNaN
    case .float64Type, .doubleType, .cgFloatType:
        let value = integral.map { Double($0) } ?? source
        p.storeBytes(of: value, as: Double.self)
        return integral.map { Int64(exactly: value) == $0 } ?? true
    }
}
