// Apple's CFData functions over the CFData alias (Foundation's Data): CFDataCreate,
// CFDataGetLength, CFDataGetBytePtr and CFDataGetBytes. Delegates storage to Data, and
// the lifetime of CFDataGetBytePtr's answer to CFInteriorPointers.

/// Apple's `CFRange`.
public struct CFRange: Sendable, Equatable {
    public var location: CFIndex
    public var length: CFIndex
    public init() { location = 0; length = 0 }
    public init(location: CFIndex, length: CFIndex) { self.location = location; self.length = length }
}

/// Apple's `CFRangeMake`.
public func CFRangeMake(_ loc: CFIndex, _ len: CFIndex) -> CFRange { CFRange(location: loc, length: len) }

/// Apple's `CFDataCreate`: a copy of `length` bytes at `bytes`.
public func CFDataCreate(_ allocator: CFAllocator!, _ bytes: UnsafePointer<UInt8>!, _ length: CFIndex) -> CFData! {
    guard length >= 0 else { return nil }
    guard let bytes, length > 0 else { return Data() }
    return Data(bytes: bytes, count: length)
}

/// Apple's `CFDataGetLength`.
public func CFDataGetLength(_ theData: CFData!) -> CFIndex {
    theData?.count ?? 0
}

/// Apple's `CFDataGetBytePtr`. Linux difference: the pointer is to a copy that stays valid
/// until 64 more pointer-returning CF calls (CFInteriorPointers), not for the CFData's
/// whole life; copy the bytes out at once, as wrappers do (`Data(bytes:count:)`).
public func CFDataGetBytePtr(_ theData: CFData!) -> UnsafePointer<UInt8>! {
    guard let theData else { return nil }
    return CFInteriorPointers.bytes(of: theData)
}

/// Apple's `CFDataGetBytes`: copies `range` of the data into `buffer`.
public func CFDataGetBytes(_ theData: CFData!, _ range: CFRange, _ buffer: UnsafeMutablePointer<UInt8>!) {
    guard let theData, let buffer, range.location >= 0, range.length >= 0,
          range.location + range.length <= theData.count else { return }
    let start = theData.startIndex + range.location
    theData[start..<(start + range.length)].copyBytes(to: buffer, count: range.length)
}
