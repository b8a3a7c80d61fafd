// Fuzz harness for KeygateSecurity's query translation (SecItemQuery): the input is
// read as a list of (key, value) records that build an Apple-style [String: Any], with
// kSec* keys and values of every type Apple code puts there (String, Data, [UInt8],
// Int, Bool, CFBoolean, NSNumber, Date, Optional layers, SecAccessControl, LAContext,
// persistent references) or random ones. Invariants: the translation never crashes;
// a refusal is a SecFailure with a known OSStatus and a message; a query it accepts
// yields the item query, the new item, the changes, and its extra filters without a
// crash, and a persistent reference round-trips. Nothing touches storage.
@testable import KeygateSecurity
import Keygate
import Foundation

enum SecurityFuzz {
    static let constants: [String] = [
        kSecClass, kSecClassGenericPassword, kSecClassInternetPassword, kSecClassCertificate, kSecClassKey, kSecClassIdentity,
        kSecAttrAccessible, kSecAttrAccessControl, kSecAttrAccessGroup, kSecAttrSynchronizable, kSecAttrSynchronizableAny,
        kSecAttrCreationDate, kSecAttrModificationDate, kSecAttrDescription, kSecAttrComment, kSecAttrCreator, kSecAttrType,
        kSecAttrLabel, kSecAttrIsInvisible, kSecAttrIsNegative, kSecAttrAccount, kSecAttrService, kSecAttrGeneric,
        kSecAttrSecurityDomain, kSecAttrServer, kSecAttrProtocol, kSecAttrAuthenticationType, kSecAttrPort, kSecAttrPath,
        kSecAttrAccessibleWhenUnlocked, kSecAttrAccessibleAfterFirstUnlock, kSecAttrAccessibleAlways,
        kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly, kSecAttrAccessibleWhenUnlockedThisDeviceOnly,
        kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, kSecAttrAccessibleAlwaysThisDeviceOnly,
        kSecAttrProtocolHTTPS, kSecAttrProtocolSSH, kSecAttrProtocolFTP, kSecAttrAuthenticationTypeHTTPBasic,
        kSecAttrAuthenticationTypeDefault, kSecValueData, kSecValueRef, kSecValuePersistentRef, kSecReturnData,
        kSecReturnAttributes, kSecReturnRef, kSecReturnPersistentRef, kSecMatchLimit, kSecMatchLimitOne, kSecMatchLimitAll,
        kSecMatchCaseInsensitive, kSecUseAuthenticationContext, kSecUseAuthenticationUI, kSecUseAuthenticationUIAllow,
        kSecUseAuthenticationUIFail, kSecUseAuthenticationUISkip, kSecUseOperationPrompt, kSecUseNoAuthenticationUI,
        kSecUseDataProtectionKeychain,
    ]
    /// The refusals Apple gives for a bad query: a bad value, a key that is not an attribute of
    /// the class, an access group not declared (KEYGATE_ACCESS_GROUPS), a key Keygate does not do.
    static let statuses: Set<OSStatus> = [errSecParam, errSecUnimplemented, errSecNoSuchAttr, errSecMissingEntitlement]
    static let context = LAContext()
    static let sample = ItemAttributes(identity: .generic(service: "svc", account: "acct"), label: "l", comment: "c",
                                       generic: [1, 2], accessibility: .whenUnlocked, accessControl: nil,
                                       description: "d", accessGroup: nil, synchronizable: false)

    static func string(_ input: inout FuzzInput) -> String {
        input.byte() % 2 == 0 ? constants[input.int(below: constants.count)] : input.string()
    }

    static func value(_ input: inout FuzzInput) -> Any {
        switch input.byte() % 16 {
        case 0, 1: return string(&input)
        case 2: return Data(input.chunk())
        case 3: return input.chunk()
        case 4: return Int(Int32(bitPattern: input.uint32()))
        case 5: return input.byte() % 2 == 0
        case 6: return (input.byte() % 2 == 0 ? kCFBooleanTrue : kCFBooleanFalse) as Any
        case 7: return NSNumber(value: Int64(Int32(bitPattern: input.uint32())))
        case 8: return Date(timeIntervalSince1970: Double(Int32(bitPattern: input.uint32())))
        case 9: return Optional<Any>.some(value(&input)) as Any
        case 10: return Optional<String>.none as Any
        case 11:
            let protection: Any = input.byte() % 4 == 0 ? input.string() : constants[input.int(below: constants.count)]
            let flags = SecAccessControlCreateFlags(rawValue: UInt(input.uint32()) | (input.byte() % 8 == 0 ? 1 << 40 : 0))
            return SecAccessControlCreateWithFlags(kCFAllocatorDefault, protection, flags, nil) as Any
        case 12: return context
        case 13:
            let id: ItemIdentity = input.byte() % 2 == 0
                ? .generic(service: input.string(), account: input.string())
                : .internet(server: input.string(), account: input.string(), port: UInt16(input.byte()))
            var data = [UInt8](SecPersistentRef.data(for: id))
            if !data.isEmpty, input.byte() % 2 == 0 { data[Int(input.byte()) % data.count] ^= input.byte() }
            return Data(data)
        case 14: return NSString(string: input.string())
        default: return [input.string()]   // a type no key takes
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecurityQuery(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    var dictionary: [String: Any] = [:]
    let count = input.int(below: 12)
    for _ in 0..<count {
        let key = SecurityFuzz.string(&input)
        dictionary[key] = SecurityFuzz.value(&input)
    }
    do {
        let query = try SecItemQuery(dictionary)
        FuzzStats.record(refused: false)
        for step in 0..<4 {
            do {
                switch step {
                case 0: _ = try query.itemQuery()
                case 1: _ = try query.newItem()
                case 2: _ = try query.changes()
                default: _ = try query.protection()
                }
            } catch {
                require(SecurityFuzz.statuses.contains(error.status) && !error.message.isEmpty,
                        "step \(step) refused with \(error.status) and \"\(error.message)\"")
            }
        }
        if query.hasExtraFilters { _ = query.matchesExtra(SecurityFuzz.sample) }
        if let identity = query.persistentRef {
            require(SecPersistentRef.identity(from: SecPersistentRef.data(for: identity)) == identity, "a persistent reference does not round-trip")
        }
    } catch {
        FuzzStats.record(refused: true)
        require(SecurityFuzz.statuses.contains(error.status) && !error.message.isEmpty,
                "refused with \(error.status) and \"\(error.message)\"")
    }
    // The raw bytes as a persistent reference.
    if let identity = SecPersistentRef.identity(from: Data(FuzzInput.all(data, size))) {
        require(SecPersistentRef.identity(from: SecPersistentRef.data(for: identity)) == identity, "a decoded reference does not round-trip")
    }
    return 0
}
