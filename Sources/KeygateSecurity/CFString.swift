// Apple's CFString functions over the CFString alias (a Swift String): creation from a C
// string, length in UTF-16 units (Apple's), copying out into a caller's C buffer, and
// comparison with CFComparisonResult and CFStringCompareFlags, plus the CFStringEncoding
// constants Keychain code names. Delegates encoding and comparison to Swift's String and
// Foundation's NSString.

/// Apple's `CFStringEncoding`.
public typealias CFStringEncoding = UInt32

/// Apple's built-in encodings, with Apple's values.
public let kCFStringEncodingMacRoman: CFStringEncoding = 0
public let kCFStringEncodingWindowsLatin1: CFStringEncoding = 0x0500
public let kCFStringEncodingISOLatin1: CFStringEncoding = 0x0201
public let kCFStringEncodingNextStepLatin: CFStringEncoding = 0x0B01
public let kCFStringEncodingASCII: CFStringEncoding = 0x0600
public let kCFStringEncodingUnicode: CFStringEncoding = 0x0100
public let kCFStringEncodingUTF8: CFStringEncoding = 0x0800_0100
public let kCFStringEncodingNonLossyASCII: CFStringEncoding = 0x0BFF
public let kCFStringEncodingUTF16: CFStringEncoding = 0x0100
public let kCFStringEncodingUTF16BE: CFStringEncoding = 0x1000_0100
public let kCFStringEncodingUTF16LE: CFStringEncoding = 0x1400_0100
public let kCFStringEncodingUTF32: CFStringEncoding = 0x0C00_0100
public let kCFStringEncodingUTF32BE: CFStringEncoding = 0x1800_0100
public let kCFStringEncodingUTF32LE: CFStringEncoding = 0x1C00_0100
/// Apple's "no encoding" marker.
public let kCFStringEncodingInvalidId: CFStringEncoding = 0xFFFF_FFFF

/// Apple's `CFStringBuiltInEncodings`, as Swift imports it: the way Swift code on Apple
/// names an encoding (`CFStringBuiltInEncodings.UTF8.rawValue`). The `kCFStringEncoding…`
/// constants above are the C names of the same values.
public enum CFStringBuiltInEncodings: CFStringEncoding, Sendable {
    case macRoman = 0
    case windowsLatin1 = 0x0500
    case isoLatin1 = 0x0201
    case nextStepLatin = 0x0B01
    case ASCII = 0x0600
    case unicode = 0x0100
    case UTF8 = 0x0800_0100
    case nonLossyASCII = 0x0BFF
    case UTF16BE = 0x1000_0100
    case UTF16LE = 0x1400_0100
    case UTF32 = 0x0C00_0100
    case UTF32BE = 0x1800_0100
    case UTF32LE = 0x1C00_0100
    public static let UTF16 = CFStringBuiltInEncodings.unicode
}

/// Apple's `CFComparisonResult`.
public enum CFComparisonResult: CFIndex, Sendable {
    case compareLessThan = -1
    case compareEqualTo = 0
    case compareGreaterThan = 1
}

/// Apple's `CFStringCompareFlags`, with Apple's bits.
public struct CFStringCompareFlags: OptionSet, Sendable {
    public let rawValue: CFOptionFlags
    public init(rawValue: CFOptionFlags) { self.rawValue = rawValue }
    public static let compareCaseInsensitive = CFStringCompareFlags(rawValue: 1)
    public static let compareBackwards = CFStringCompareFlags(rawValue: 4)
    public static let compareAnchored = CFStringCompareFlags(rawValue: 8)
    public static let compareNonliteral = CFStringCompareFlags(rawValue: 16)
    public static let compareLocalized = CFStringCompareFlags(rawValue: 32)
    public static let compareNumerically = CFStringCompareFlags(rawValue: 64)
    public static let compareDiacriticInsensitive = CFStringCompareFlags(rawValue: 128)
    public static let compareWidthInsensitive = CFStringCompareFlags(rawValue: 256)
    public static let compareForcedOrdering = CFStringCompareFlags(rawValue: 512)
}

enum CFStringSupport {
    /// Foundation's encoding for a CFStringEncoding Keygate supports; nil for the others.
    static func encoding(_ e: CFStringEncoding) -> String.Encoding? {
        switch e {
        case kCFStringEncodingUTF8: return .utf8
        case kCFStringEncodingASCII: return .ascii
        case kCFStringEncodingISOLatin1: return .isoLatin1
        case kCFStringEncodingWindowsLatin1: return .windowsCP1252
        case kCFStringEncodingMacRoman: return .macOSRoman
        case kCFStringEncodingNonLossyASCII: return .nonLossyASCII
        default: return nil
        }
    }
}

/// Apple's `CFStringCreateWithCString`. Returns nil when the bytes are not valid in
/// `encoding`, or the encoding is not one of the 8-bit ones above.
public func CFStringCreateWithCString(_ alloc: CFAllocator!, _ cStr: UnsafePointer<CChar>!,
                                      _ encoding: CFStringEncoding) -> CFString! {
    guard let cStr, let e = CFStringSupport.encoding(encoding) else { return nil }
    let bytes = Data(bytes: cStr, count: strlen(cStr))
    return String(data: bytes, encoding: e)
}

/// Apple's `CFStringGetLength`: the number of UTF-16 code units, as on Apple.
public func CFStringGetLength(_ theString: CFString!) -> CFIndex {
    theString?.utf16.count ?? 0
}

/// Apple's `CFStringGetCString`: copies the string, NUL-terminated, into `buffer`. Returns
/// false (and leaves the buffer unspecified, as Apple does) when it does not fit in
/// `bufferSize` bytes or cannot be encoded.
public func CFStringGetCString(_ theString: CFString!, _ buffer: UnsafeMutablePointer<CChar>!,
                               _ bufferSize: CFIndex, _ encoding: CFStringEncoding) -> Bool {
    guard let theString, let buffer, let e = CFStringSupport.encoding(encoding),
          let bytes = theString.data(using: e, allowLossyConversion: false),
          bytes.count + 1 <= bufferSize else { return false }
    bytes.withUnsafeBytes { raw in
        for (i, b) in raw.enumerated() { buffer[i] = CChar(bitPattern: b) }
    }
    buffer[bytes.count] = 0
    return true
}

/// Apple's `CFStringGetCStringPtr`. Apple may return NULL whenever no internal buffer in
/// that encoding exists, and callers must then use CFStringGetCString; a Swift String has
/// none to lend, so this always returns nil.
public func CFStringGetCStringPtr(_ theString: CFString!, _ encoding: CFStringEncoding) -> UnsafePointer<CChar>! {
    nil
}

/// Apple's `CFStringCompare`, with the case-insensitive, numeric, diacritic-, width-
/// insensitive, backwards and anchored flags as NSString applies them.
public func CFStringCompare(_ theString1: CFString!, _ theString2: CFString!,
                            _ compareOptions: CFStringCompareFlags) -> CFComparisonResult {
    let a = theString1 ?? "", b = theString2 ?? ""
    var options: NSString.CompareOptions = []
    if compareOptions.contains(.compareCaseInsensitive) { options.insert(.caseInsensitive) }
    if compareOptions.contains(.compareNumerically) { options.insert(.numeric) }
    if compareOptions.contains(.compareDiacriticInsensitive) { options.insert(.diacriticInsensitive) }
    if compareOptions.contains(.compareWidthInsensitive) { options.insert(.widthInsensitive) }
    if compareOptions.contains(.compareForcedOrdering) { options.insert(.forcedOrdering) }
    if !compareOptions.contains(.compareNonliteral) { options.insert(.literal) }
    switch a.compare(b, options: options) {
    case .orderedAscending: return .compareLessThan
    case .orderedSame: return .compareEqualTo
    case .orderedDescending: return .compareGreaterThan
    }
}
