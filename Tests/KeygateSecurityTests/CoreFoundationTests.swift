// The CoreFoundation functions KeygateSecurity declares for its aliases, called as Apple
// code calls them (Swift 5 mode, Apple's argument shapes). Pure: no keychain involved,
// except the SecAccessControl calls, which only validate.
import Foundation
import KeygateSecurity
import XCTest

final class CoreFoundationTests: XCTestCase {

    // MARK: CFError

    func test_CFErrorCreate_andAccessors_returnWhatWasStored() {
        let info: [String: Any] = [kCFErrorLocalizedDescriptionKey as String: "the disk is full",
                                   kCFErrorLocalizedFailureReasonKey as String: "no space left",
                                   kCFErrorLocalizedRecoverySuggestionKey as String: "free some space"]
        let error: CFError = CFErrorCreate(kCFAllocatorDefault, kCFErrorDomainPOSIX, CFIndex(ENOSPC), info as CFDictionary)
        XCTAssertEqual(CFErrorGetDomain(error) as String, NSPOSIXErrorDomain)
        XCTAssertEqual(CFErrorGetCode(error), CFIndex(ENOSPC))
        XCTAssertEqual(CFErrorCopyDescription(error) as String, "the disk is full")
        XCTAssertEqual(CFErrorCopyFailureReason(error) as String?, "no space left")
        XCTAssertEqual(CFErrorCopyRecoverySuggestion(error) as String?, "free some space")
        let copied = CFErrorCopyUserInfo(error) as NSDictionary?
        XCTAssertEqual(copied?[kCFErrorLocalizedDescriptionKey as String] as? String, "the disk is full")
        XCTAssertEqual(CFGetTypeID(error), CFErrorGetTypeID())
    }

    func test_CFErrorCreate_withNilUserInfo_hasEmptyUserInfo_noFailureReason_andADefaultDescription() {
        let error: CFError = CFErrorCreate(nil, kCFErrorDomainOSStatus, CFIndex(errSecItemNotFound), nil)
        XCTAssertEqual((CFErrorCopyUserInfo(error) as NSDictionary?)?.count, 0)
        XCTAssertNil(CFErrorCopyFailureReason(error) as String?)
        let description = CFErrorCopyDescription(error) as String
        XCTAssertTrue(description.contains("-25300"), description)
        XCTAssertNil(CFErrorCreate(nil, nil, 1, nil) as CFError?, "a nil domain gives no error object")
    }

    func test_CFErrorDomains_areFoundationsDomainStrings() {
        XCTAssertEqual(kCFErrorDomainPOSIX as String, NSPOSIXErrorDomain)
        XCTAssertEqual(kCFErrorDomainOSStatus as String, NSOSStatusErrorDomain)
        XCTAssertEqual(kCFErrorDomainMach as String, NSMachErrorDomain)
        XCTAssertEqual(kCFErrorDomainCocoa as String, NSCocoaErrorDomain)
        XCTAssertEqual(Set([kCFErrorDomainPOSIX, kCFErrorDomainOSStatus, kCFErrorDomainMach, kCFErrorDomainCocoa].compactMap { $0 }).count, 4)
    }

    /// A wrapper turns the Unmanaged<CFError> of SecAccessControlCreateWithFlags into an NSError.
    func test_unmanagedCFError_fromSecAccessControl_isAnNSErrorWithTheCFAccessors() {
        var unmanaged: Unmanaged<CFError>?
        let access = SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked,
                                                     [.biometryAny, .biometryCurrentSet], &unmanaged)
        XCTAssertNil(access)
        guard let cfError = unmanaged?.takeRetainedValue() else { return XCTFail("no CFError was set") }
        let nsError = cfError as Error as NSError
        XCTAssertEqual(nsError.domain, NSOSStatusErrorDomain)
        XCTAssertEqual(nsError.code, Int(errSecParam))
        XCTAssertEqual(CFErrorGetDomain(cfError) as String, kCFErrorDomainOSStatus as String)
        XCTAssertEqual(CFErrorGetCode(cfError), CFIndex(errSecParam))
        XCTAssertFalse((CFErrorCopyDescription(cfError) as String).isEmpty)
        var none: Unmanaged<CFError>?
        XCTAssertNotNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, &none))
        XCTAssertNil(none, "success leaves the error out-parameter alone")
    }

    // MARK: Type identity and flags

    func test_CFGetTypeID_distinguishesEveryAliasedType() {
        let samples: [(AnyObject, CFTypeID)] = [
            ("s" as AnyObject, CFStringGetTypeID()), (Data([1]) as AnyObject, CFDataGetTypeID()),
            (["k": 1] as [String: Any] as AnyObject, CFDictionaryGetTypeID()), ([1, 2] as AnyObject, CFArrayGetTypeID()),
            (NSNumber(value: 42), CFNumberGetTypeID()), (kCFBooleanTrue, CFBooleanGetTypeID()),
            (NSNumber(value: true), CFBooleanGetTypeID()), (Date() as AnyObject, CFDateGetTypeID()),
            (NSError(domain: "d", code: 1), CFErrorGetTypeID()),
        ]
        for (object, expected) in samples {
            XCTAssertEqual(CFGetTypeID(object), expected, "\(object)")
        }
        let ids = [CFStringGetTypeID(), CFDataGetTypeID(), CFDictionaryGetTypeID(), CFArrayGetTypeID(), CFNumberGetTypeID(),
                   CFBooleanGetTypeID(), CFDateGetTypeID(), CFErrorGetTypeID(), SecAccessControlGetTypeID(), SecKeychainItemGetTypeID()]
        XCTAssertEqual(Set(ids).count, ids.count, "every type has its own identifier")
        XCTAssertEqual(CFGetTypeID(kSecClass), CFStringGetTypeID(), "a CFString constant (a Swift String here) needs no cast")
        XCTAssertEqual(CFGetTypeID(Data()), CFDataGetTypeID())
    }

    func test_CFBooleans_bridgeToBoolAndNSNumber_bothWaysInDictionaries() {
        let query: [String: Any] = [kSecReturnData as String: kCFBooleanTrue as Any, kSecReturnRef as String: kCFBooleanFalse!,
                                    kSecReturnAttributes as String: true]
        XCTAssertEqual(query[kSecReturnData as String] as? Bool, true, "an implicitly unwrapped kCFBooleanTrue read back")
        XCTAssertEqual(query[kSecReturnRef as String] as? Bool, false)
        XCTAssertEqual(query[kSecReturnData as String] as? NSNumber, NSNumber(value: true))
        XCTAssertEqual(query[kSecReturnAttributes as String] as? NSNumber, kCFBooleanTrue, "a Bool read back as a CFBoolean")
        XCTAssertTrue(kCFBooleanTrue == true)
        XCTAssertTrue(kCFBooleanFalse == false)
        XCTAssertFalse(kCFBooleanTrue == false)
        XCTAssertEqual(kCFBooleanTrue as? Bool, true)
        XCTAssertTrue(CFBooleanGetValue(kCFBooleanTrue))
        XCTAssertFalse(CFBooleanGetValue(kCFBooleanFalse))
        XCTAssertTrue((true as AnyObject) === kCFBooleanTrue, "Foundation's shared true is the CFBoolean")
        XCTAssertEqual(CFGetTypeID(kCFBooleanFalse), CFBooleanGetTypeID())
        XCTAssertNotEqual(CFGetTypeID(NSNumber(value: 1)), CFBooleanGetTypeID(), "a number is not a boolean")
    }

    func test_SecAccessControlGetTypeID_isWhatCFGetTypeIDSaysOfOne() throws {
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .devicePasscode, nil))
        XCTAssertEqual(CFGetTypeID(access), SecAccessControlGetTypeID())
        XCTAssertNotEqual(CFGetTypeID(access), CFDictionaryGetTypeID())
    }

    func test_SecAccessControlCreateFlags_fromCFOptionFlags_isTheNamedFlagSet() {
        let raw: CFOptionFlags = CFOptionFlags(1 << 0 | 1 << 4 | 1 << 14)
        let flags = SecAccessControlCreateFlags(rawValue: raw)
        XCTAssertEqual(flags, [.userPresence, .devicePasscode, .or])
        XCTAssertEqual(SecAccessControlCreateFlags(rawValue: CFOptionFlags(8)), .biometryCurrentSet)
        XCTAssertNotNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked,
                                                        SecAccessControlCreateFlags(rawValue: CFOptionFlags(1 << 4 | 1 << 1 | 1 << 14)), nil))
        XCTAssertNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked,
                                                     SecAccessControlCreateFlags(rawValue: CFOptionFlags(1 << 4 | 1 << 14 | 1 << 15)), nil),
                     "and with or is refused, however the flags were built")
    }

    // MARK: CFNumber

    func test_CFNumber_roundTripsEachCommonType() {
        var i8: Int8 = -7, i16: Int16 = -300, i32: Int32 = 70_000, i64: Int64 = -5_000_000_000
        var f32: Float = 1.5, f64: Double = -2.25
        var o8: Int8 = 0, o16: Int16 = 0, o32: Int32 = 0, o64: Int64 = 0, of32: Float = 0, of64: Double = 0
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .sInt8Type, &i8), .sInt8Type, &o8))
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .sInt16Type, &i16), .sInt16Type, &o16))
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .sInt32Type, &i32), .sInt32Type, &o32))
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .sInt64Type, &i64), .sInt64Type, &o64))
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .float32Type, &f32), .float32Type, &of32))
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .float64Type, &f64), .float64Type, &of64))
        XCTAssertEqual([Int64(o8), Int64(o16), Int64(o32), o64], [-7, -300, 70_000, -5_000_000_000])
        XCTAssertEqual(of32, 1.5)
        XCTAssertEqual(of64, -2.25)
        var int = 12, cfIndex: CFIndex = 0
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(kCFAllocatorDefault, .intType, &int), .cfIndexType, &cfIndex))
        XCTAssertEqual(cfIndex, 12)
        XCTAssertEqual(CFGetTypeID(CFNumberCreate(nil, .intType, &int)), CFNumberGetTypeID())
    }

    func test_CFNumberGetValue_storesTheNearestValue_andReportsLoss() {
        var big: Int64 = 70_000
        var fraction: Double = 3.75
        var small: Int16 = 0, whole: Int32 = 0
        XCTAssertFalse(CFNumberGetValue(CFNumberCreate(nil, .sInt64Type, &big), .sInt16Type, &small), "70000 does not fit 16 bits")
        XCTAssertFalse(CFNumberGetValue(CFNumberCreate(nil, .doubleType, &fraction), .sInt32Type, &whole))
        XCTAssertEqual(whole, 3, "the fraction is dropped")
        var exact: Double = 8
        XCTAssertTrue(CFNumberGetValue(CFNumberCreate(nil, .doubleType, &exact), .sInt32Type, &whole))
        XCTAssertEqual(whole, 8)
    }

    func test_CFNumberGetType_andIsFloatType_reportHowTheNumberWasStored() {
        var i: Int32 = 1, d: Double = 1.5
        XCTAssertEqual(CFNumberGetType(CFNumberCreate(nil, .sInt32Type, &i)), .sInt32Type)
        XCTAssertEqual(CFNumberGetType(CFNumberCreate(nil, .float64Type, &d)), .float64Type)
        XCTAssertFalse(CFNumberIsFloatType(CFNumberCreate(nil, .sInt32Type, &i)))
        XCTAssertTrue(CFNumberIsFloatType(CFNumberCreate(nil, .float64Type, &d)))
        XCTAssertEqual(CFNumberGetByteSize(CFNumberCreate(nil, .sInt32Type, &i)), 4)
        XCTAssertEqual(CFNumberType.sInt64Type.rawValue, 4, "Apple's raw values")
        XCTAssertEqual(CFNumberType.cfIndexType.rawValue, 14)
    }

    // MARK: CFString

    func test_CFStringCreateWithCString_decodesUTF8_andRefusesBadBytes() {
        let made: CFString? = "naïve ✓".withCString { CFStringCreateWithCString(kCFAllocatorDefault, $0, CFStringEncoding(kCFStringEncodingUTF8)) }
        XCTAssertEqual(made, "naïve ✓")
        let bad: [CChar] = [CChar(bitPattern: 0xC3), 0x28, 0]
        XCTAssertNil(bad.withUnsafeBufferPointer { CFStringCreateWithCString(nil, $0.baseAddress, kCFStringEncodingUTF8) } as CFString?)
        let swiftStyle: CFString? = "ok".withCString { CFStringCreateWithCString(nil, $0, CFStringBuiltInEncodings.UTF8.rawValue) }
        XCTAssertEqual(swiftStyle, "ok")
        XCTAssertEqual(CFStringBuiltInEncodings.UTF8.rawValue, kCFStringEncodingUTF8)
        let latin: [CChar] = [CChar(bitPattern: 0xE9), 0]
        XCTAssertEqual(latin.withUnsafeBufferPointer { CFStringCreateWithCString(nil, $0.baseAddress, kCFStringEncodingISOLatin1) } as CFString?, "é")
    }

    func test_CFStringGetLength_countsUTF16Units_asApplesDoes() {
        XCTAssertEqual(CFStringGetLength("abc"), 3)
        XCTAssertEqual(CFStringGetLength("é"), 1)
        XCTAssertEqual(CFStringGetLength("😀"), 2, "a character outside the BMP is two UTF-16 units")
        XCTAssertEqual(CFStringGetLength(""), 0)
    }

    func test_CFStringGetCString_copiesWithATerminator_andRefusesASmallBuffer() {
        var buffer = [CChar](repeating: 1, count: 8)
        XCTAssertTrue(CFStringGetCString("héllo", &buffer, buffer.count, kCFStringEncodingUTF8))
        XCTAssertEqual(String(cString: buffer), "héllo")
        XCTAssertEqual(buffer[6], 0, "5 characters, 6 UTF-8 bytes, then NUL")
        var tiny = [CChar](repeating: 1, count: 6)
        XCTAssertFalse(CFStringGetCString("héllo", &tiny, tiny.count, kCFStringEncodingUTF8), "6 bytes + NUL do not fit in 6")
        var ascii = [CChar](repeating: 0, count: 16)
        XCTAssertFalse(CFStringGetCString("héllo", &ascii, ascii.count, kCFStringEncodingASCII), "é is not ASCII")
        XCTAssertNil(CFStringGetCStringPtr("abc", kCFStringEncodingUTF8), "Apple may return NULL; callers fall back to GetCString")
    }

    func test_CFStringCompare_ordersAndHonoursFlags() {
        XCTAssertEqual(CFStringCompare("apple", "banana", []), .compareLessThan)
        XCTAssertEqual(CFStringCompare("b", "a", []), .compareGreaterThan)
        XCTAssertEqual(CFStringCompare("Token", "token", []), .compareLessThan)
        XCTAssertEqual(CFStringCompare("Token", "token", .compareCaseInsensitive), .compareEqualTo)
        XCTAssertEqual(CFStringCompare("item9", "item10", []), .compareGreaterThan)
        XCTAssertEqual(CFStringCompare("item9", "item10", .compareNumerically), .compareLessThan)
        XCTAssertEqual(CFComparisonResult.compareLessThan.rawValue, -1)
    }

    // MARK: CFData, CFDictionary, CFArray

    func test_CFData_createLengthBytePtrAndGetBytes() {
        let bytes: [UInt8] = [0, 1, 2, 0xfe, 0xff]
        let data: CFData = CFDataCreate(kCFAllocatorDefault, bytes, bytes.count)
        XCTAssertEqual(CFDataGetLength(data), 5)
        let pointer = try? XCTUnwrap(CFDataGetBytePtr(data))
        XCTAssertEqual(pointer.map { Array(UnsafeBufferPointer(start: $0, count: 5)) }, bytes)
        var middle = [UInt8](repeating: 0, count: 3)
        CFDataGetBytes(data, CFRangeMake(1, 3), &middle)
        XCTAssertEqual(middle, [1, 2, 0xfe])
        XCTAssertEqual(CFDataGetLength(CFDataCreate(nil, nil, 0)), 0)
        XCTAssertEqual(CFGetTypeID(data as AnyObject), CFDataGetTypeID())
    }

    func test_CFDictionary_builtTheCWay_setGetCountRemove() {
        var keyCallBacks = kCFTypeDictionaryKeyCallBacks
        var valueCallBacks = kCFTypeDictionaryValueCallBacks
        let dict: CFMutableDictionary = CFDictionaryCreateMutable(kCFAllocatorDefault, 0, &keyCallBacks, &valueCallBacks)
        let key = kSecAttrAccount as AnyObject, value = "alice" as AnyObject
        CFDictionarySetValue(dict, Unmanaged.passUnretained(key).toOpaque(), Unmanaged.passUnretained(value).toOpaque())
        CFDictionarySetValue(dict, kSecAttrService, "svc")
        XCTAssertEqual(CFDictionaryGetCount(dict), 2)
        XCTAssertTrue(CFDictionaryContainsKey(dict, Unmanaged.passUnretained(key).toOpaque()))
        let got = CFDictionaryGetValue(dict, Unmanaged.passUnretained(key).toOpaque())
        XCTAssertEqual(got.map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() as? String }, "alice")
        XCTAssertNotNil(CFDictionaryGetValue(dict, kSecAttrService))
        let bob = "bob" as AnyObject
        CFDictionaryAddValue(dict, Unmanaged.passUnretained(key).toOpaque(), Unmanaged.passUnretained(bob).toOpaque())
        XCTAssertEqual(CFDictionaryGetValue(dict, kSecAttrAccount).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() as? String }, "alice",
                       "AddValue leaves an existing key alone")
        CFDictionaryRemoveValue(dict, Unmanaged.passUnretained(key).toOpaque())
        XCTAssertEqual(CFDictionaryGetCount(dict), 1)
        XCTAssertNil(CFDictionaryGetValue(dict, kSecAttrAccount))
        XCTAssertEqual(CFGetTypeID(dict), CFDictionaryGetTypeID())
    }

    func test_CFDictionaryGetValue_onASwiftDictionary_andCFArray_walkElements() {
        let plain: CFDictionary = [kSecAttrAccount as String: "carol", kSecAttrPort as String: NSNumber(value: 443)]
        let account = CFDictionaryGetValue(plain, kSecAttrAccount).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
        XCTAssertEqual(account as? String, "carol")
        XCTAssertNil(CFDictionaryGetValue(plain, kSecAttrService))
        XCTAssertEqual(CFDictionaryGetCount(plain), 2)
        let array: CFArray = [Data([1]), "two", NSNumber(value: 3)]
        XCTAssertEqual(CFArrayGetCount(array), 3)
        let types = (0..<CFArrayGetCount(array)).compactMap { CFArrayGetValueAtIndex(array, $0) }
            .map { CFGetTypeID(Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue()) }
        XCTAssertEqual(types, [CFDataGetTypeID(), CFStringGetTypeID(), CFNumberGetTypeID()])
        XCTAssertNil(CFArrayGetValueAtIndex(array, 3), "out of range gives nil, not a pointer")
    }

    // MARK: Memory and dates

    func test_CFRetainRelease_areIdentities_CFCopyDescription_CFEqual() {
        let object = NSNumber(value: 7)
        let retained = CFRetain(object)
        XCTAssertTrue(retained === object)
        CFRelease(object)
        XCTAssertEqual(CFCopyDescription(object) as String, "7")
        XCTAssertEqual(CFCopyDescription("text") as String, "text")
        XCTAssertTrue(CFEqual(NSNumber(value: 7), object))
        XCTAssertFalse(CFEqual(NSNumber(value: 8), object))
        XCTAssertEqual(CFHash(object), CFHash(NSNumber(value: 7)))
        let unmanaged = Unmanaged.passRetained(object)
        XCTAssertTrue(unmanaged.takeRetainedValue() === object, "Unmanaged works as in Apple's SDK")
    }

    func test_CFDate_bridgesWithDate_andUsesApplesReferenceDate() {
        let date: CFDate = CFDateCreate(kCFAllocatorDefault, 0)
        XCTAssertEqual((date as Date).timeIntervalSince1970, kCFAbsoluteTimeIntervalSince1970)
        let now = Date()
        XCTAssertEqual(CFDateGetAbsoluteTime(now as CFDate), now.timeIntervalSinceReferenceDate, accuracy: 0.000_001)
        XCTAssertEqual(CFDateCompare(date, now, nil), .compareLessThan)
        XCTAssertEqual(CFDateGetTimeIntervalSinceDate(CFDateCreate(nil, 60), date), 60)
        XCTAssertEqual(CFAbsoluteTimeGetCurrent(), Date().timeIntervalSinceReferenceDate, accuracy: 5)
        XCTAssertEqual(CFGetTypeID(now as AnyObject), CFDateGetTypeID())
    }
}
