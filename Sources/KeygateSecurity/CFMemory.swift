// Apple's CoreFoundation memory and identity functions under ARC: CFRetain and CFAutorelease
// return their argument, CFRelease does nothing, CFCopyDescription describes, CFEqual and
// CFHash compare as Foundation does. Apple's Swift overlay marks CFRetain/CFRelease
// unavailable; here they compile and are harmless. Each takes a CFTypeRef, as Apple's do,
// with an `Any` overload for the aliases that are Swift values (CFString, CFData, ...).
// Delegates to Foundation's NSObject equality and description.

/// Apple's `CFRetain`: an identity under ARC.
@discardableResult
public func CFRetain(_ cf: CFTypeRef!) -> CFTypeRef! { cf }
@discardableResult
public func CFRetain<T>(_ cf: T) -> T { cf }

/// Apple's `CFRelease`: nothing to do under ARC.
public func CFRelease(_ cf: CFTypeRef!) {}
public func CFRelease<T>(_ cf: T) {}

/// Apple's `CFAutorelease`: an identity under ARC.
public func CFAutorelease(_ arg: CFTypeRef!) -> CFTypeRef! { arg }

/// Apple's `CFCopyDescription`.
public func CFCopyDescription(_ cf: CFTypeRef!) -> CFString! {
    guard let cf else { return nil }
    return String(describing: cf)
}
public func CFCopyDescription(_ cf: Any) -> CFString! {
    String(describing: SecValue.unwrapped(cf) ?? cf)
}

/// Apple's `CFEqual`.
public func CFEqual(_ cf1: CFTypeRef!, _ cf2: CFTypeRef!) -> Bool {
    guard let cf1, let cf2 else { return false }
    if cf1 === cf2 { return true }
    if let a = cf1 as? NSObject, let b = cf2 as? NSObject { return a.isEqual(b) }
    return false
}

/// Apple's `CFHash`.
public func CFHash(_ cf: CFTypeRef!) -> CFHashCode {
    guard let cf else { return 0 }
    if let o = cf as? NSObject { return CFHashCode(bitPattern: o.hash) }
    return CFHashCode(bitPattern: ObjectIdentifier(cf).hashValue)
}

/// Apple's `CFBridgingRetain`: under ARC here, the value as a CoreFoundation object.
public func CFBridgingRetain(_ X: Any?) -> CFTypeRef? {
    X.flatMap(SecValue.unwrapped).map { $0 as AnyObject }
}

/// Apple's `CFBridgingRelease`: the object back as a Swift value.
public func CFBridgingRelease(_ X: CFTypeRef?) -> Any? { X }

/// Apple's `CFShow`: the description, on standard error.
public func CFShow(_ obj: CFTypeRef!) {
    FileHandle.standardError.write(Data(((CFCopyDescription(obj) as String?) ?? "(null)").utf8 + [0x0A]))
}

/// `CFGetTypeID` for the aliases that are Swift values (a CFString is a String here).
public func CFGetTypeID(_ cf: Any) -> CFTypeID {
    guard let v = SecValue.unwrapped(cf) else { return CFTypeIdentifier.unknown }
    return CFTypeIdentifier.of(v as AnyObject)
}
