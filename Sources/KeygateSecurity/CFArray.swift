// Apple's CFArray functions over the CFArray alias (`[Any]`): CFArrayGetCount and
// CFArrayGetValueAtIndex, for wrappers that walk a kSecMatchLimitAll result the C way.
// Delegates the lifetime of the returned element pointers to CFInteriorPointers.

/// Apple's `CFArrayGetCount`.
public func CFArrayGetCount(_ theArray: CFArray!) -> CFIndex {
    theArray?.count ?? 0
}

/// Apple's `CFArrayGetValueAtIndex`: a pointer to the element as a CoreFoundation object
/// (`Unmanaged<AnyObject>.fromOpaque(p).takeUnretainedValue()`). An index out of range,
/// a precondition failure on Apple, gives nil. Linux difference: the element object is
/// kept by CFInteriorPointers, not by the array.
public func CFArrayGetValueAtIndex(_ theArray: CFArray!, _ idx: CFIndex) -> UnsafeRawPointer! {
    guard let theArray, theArray.indices.contains(idx), let v = SecValue.unwrapped(theArray[idx]) else { return nil }
    return CFInteriorPointers.pointer(to: v as AnyObject)
}
