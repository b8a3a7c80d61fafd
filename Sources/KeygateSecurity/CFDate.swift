// Apple's CFDate (here Foundation's Date, so `date as CFDate` and `cfDate as Date` are
// identities, as toll-free bridging makes them on Apple), CFAbsoluteTime, and the CFDate
// functions on it. Delegates to Foundation's Date.

/// Apple's `CFDate`.
public typealias CFDate = Date
/// Apple's `CFTimeInterval`.
public typealias CFTimeInterval = Double
/// Apple's `CFAbsoluteTime`: seconds since 2001-01-01 00:00:00 UTC.
public typealias CFAbsoluteTime = CFTimeInterval

/// Apple's constants between the reference date and the Unix and 1904 epochs.
public let kCFAbsoluteTimeIntervalSince1970: CFTimeInterval = 978_307_200.0
public let kCFAbsoluteTimeIntervalSince1904: CFTimeInterval = 3_061_152_000.0

/// Apple's `CFAbsoluteTimeGetCurrent`.
public func CFAbsoluteTimeGetCurrent() -> CFAbsoluteTime { Date().timeIntervalSinceReferenceDate }

/// Apple's `CFDateCreate`.
public func CFDateCreate(_ allocator: CFAllocator!, _ at: CFAbsoluteTime) -> CFDate! {
    Date(timeIntervalSinceReferenceDate: at)
}

/// Apple's `CFDateGetAbsoluteTime`.
public func CFDateGetAbsoluteTime(_ theDate: CFDate!) -> CFAbsoluteTime {
    theDate?.timeIntervalSinceReferenceDate ?? 0
}

/// Apple's `CFDateGetTimeIntervalSinceDate`.
public func CFDateGetTimeIntervalSinceDate(_ theDate: CFDate!, _ otherDate: CFDate!) -> CFTimeInterval {
    guard let theDate, let otherDate else { return 0 }
    return theDate.timeIntervalSince(otherDate)
}

/// Apple's `CFDateCompare`; `context` is unused, as on Apple.
public func CFDateCompare(_ theDate: CFDate!, _ otherDate: CFDate!, _ context: UnsafeMutableRawPointer!) -> CFComparisonResult {
    let a = theDate ?? Date.distantPast, b = otherDate ?? Date.distantPast
    return a < b ? .compareLessThan : (a > b ? .compareGreaterThan : .compareEqualTo)
}
