// AccessControl: Apple's bit values, Apple's validation rules (each refusal is errSecParam
// with a message that says why and what to use), the CLI/attribute text form, and how
// several constraints combine.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class AccessControlTests: XCTestCase {
    private func assertParam(_ flags: AccessControl, mentions words: [String],
                             file: StaticString = #filePath, line: UInt = #line) {
        let error = assertThrowsKeychainError(.param, file: file, line: line) { try flags.validate() }
        for word in words {
            XCTAssertTrue(error?.message.contains(word) ?? false,
                          "message \"\(error?.message ?? "")\" should mention \(word)", file: file, line: line)
        }
    }

    // MARK: - Apple's values

    func test_flags_haveApplesBitValues() {
        XCTAssertEqual(AccessControl.userPresence.rawValue, 1)
        XCTAssertEqual(AccessControl.biometryAny.rawValue, 2)
        XCTAssertEqual(AccessControl.biometryCurrentSet.rawValue, 8)
        XCTAssertEqual(AccessControl.devicePasscode.rawValue, 16)
        XCTAssertEqual(AccessControl.or.rawValue, 16384)
        XCTAssertEqual(AccessControl.and.rawValue, 32768)
    }

    // MARK: - validation: refusals

    func test_validate_refusesAndWithOr_namingBothChoices() {
        assertParam([.devicePasscode, .biometryAny, .and, .or], mentions: ["`and` and `or`", "--and", "--or"])
    }

    func test_validate_refusesBothBiometryFlags_sayingWhichToPick() {
        assertParam([.biometryAny, .biometryCurrentSet], mentions: ["biometry-any", "current-set", "choose"])
        assertParam([.biometryAny, .biometryCurrentSet, .or], mentions: ["biometry-any", "current-set"])
    }

    func test_validate_refusesUserPresenceWithAnyOtherConstraint_suggestingSpecificOnes() {
        for other: AccessControl in [.devicePasscode, .biometryAny, .biometryCurrentSet] {
            assertParam([.userPresence, other], mentions: ["user-presence cannot be combined", "device-passcode,biometry-any"])
            assertParam([.userPresence, other, .or], mentions: ["user-presence cannot be combined"])
        }
    }

    func test_validate_refusesNoConstraint_evenWithACombination() {
        assertParam([], mentions: ["no constraint", "user-presence"])
        assertParam([.or], mentions: ["no constraint"])
        assertParam([.and], mentions: ["no constraint"])
    }

    func test_validate_refusesUnknownBits_showingThem() {
        assertParam(AccessControl(rawValue: 1 << 30 | 1), mentions: ["0x40000000", "does not support"])
        assertParam(AccessControl(rawValue: 1 << 2), mentions: ["0x4"])  // bit 2 is unused by Apple
        assertParam(AccessControl(rawValue: 1 << 5 | 16), mentions: ["0x20", "watch"])  // Apple's watch flag
    }

    // MARK: - validation: accepted combinations

    func test_validate_acceptsApplesValidCombinations() throws {
        let valid: [AccessControl] = [
            [.devicePasscode, .biometryAny, .or],
            [.biometryCurrentSet],
            [.devicePasscode, .biometryCurrentSet, .and],
            [.userPresence],
            [.userPresence, .or],
            [.devicePasscode, .biometryCurrentSet],
        ]
        for flags in valid {
            XCTAssertNoThrow(try flags.validate(), "flags 0x\(String(flags.rawValue, radix: 16))")
        }
    }

    // MARK: - constraints and combination

    func test_constraints_areListedInTheFixedOrder_whateverTheBits() {
        let flags: AccessControl = [.biometryCurrentSet, .devicePasscode, .and]
        XCTAssertEqual(flags.constraints, [.devicePasscode, .biometryCurrentSet])
        XCTAssertEqual(AccessControl([.biometryAny, .devicePasscode, .or]).constraints, [.devicePasscode, .biometryAny])
    }

    func test_requiresAll_isTrueForAnd_andForSeveralConstraintsWithNoCombination() {
        XCTAssertTrue(AccessControl([.devicePasscode, .biometryCurrentSet, .and]).requiresAll)
        XCTAssertTrue(AccessControl([.devicePasscode, .biometryCurrentSet]).requiresAll)  // stricter reading
        XCTAssertTrue(AccessControl([.devicePasscode, .and]).requiresAll)
    }

    func test_requiresAll_isFalseForOr_andForOneConstraintAlone() {
        XCTAssertFalse(AccessControl([.devicePasscode, .biometryAny, .or]).requiresAll)
        XCTAssertFalse(AccessControl([.userPresence]).requiresAll)
        XCTAssertFalse(AccessControl([.biometryCurrentSet, .or]).requiresAll)
    }

    // MARK: - text form

    func test_attributeValue_writesNamesInOrder_withTheCombinationWhenGiven() {
        XCTAssertEqual(AccessControl.userPresence.attributeValue, "user-presence")
        XCTAssertEqual(AccessControl([.currentSet, .devicePasscode]).attributeValue, "device-passcode,current-set")
        XCTAssertEqual(AccessControl([.biometryCurrentSet, .devicePasscode]).attributeValue, "device-passcode,biometry-current-set")
        XCTAssertEqual(AccessControl([.biometryAny, .devicePasscode, .or]).attributeValue, "device-passcode,biometry-any;or")
        XCTAssertEqual(AccessControl([.currentSet, .devicePasscode, .and]).attributeValue, "device-passcode,current-set;and")
    }

    func test_parsing_roundTripsEveryValidCombination() throws {
        let names = AccessControl.Constraint.allCases
        var checked = 0
        for mask in 1..<(1 << names.count) {
            for combination: AccessControl in [[], .or, .and] {
                var flags = combination
                for (i, c) in names.enumerated() where mask & (1 << i) != 0 { flags.insert(c.flag) }
                guard (try? flags.validate()) != nil else { continue }
                XCTAssertEqual(try AccessControl(attributeValue: flags.attributeValue), flags, flags.attributeValue)
                let list = flags.constraints.map(\.rawValue).joined(separator: ",")
                XCTAssertEqual(try AccessControl(parsing: list, or: flags.contains(.or), and: flags.contains(.and)), flags)
                checked += 1
            }
        }
        // user-presence alone, and 11 of the 15 sets of the other four (not both biometry flags), x3
        XCTAssertEqual(checked, 3 * (1 + 11))
    }

    func test_parsing_acceptsApplesNames_andBiometryCurrentSet_inAnyCase() throws {
        XCTAssertEqual(try AccessControl(parsing: "userPresence", or: false, and: false), .userPresence)
        XCTAssertEqual(try AccessControl(parsing: "devicePasscode,biometryAny", or: true, and: false),
                       [.devicePasscode, .biometryAny, .or])
        XCTAssertEqual(try AccessControl(parsing: "biometry-current-set", or: false, and: false), .biometryCurrentSet)
        XCTAssertEqual(try AccessControl(parsing: "BiometryCurrentSet, kSecAccessControlDevicePasscode", or: false, and: true),
                       [.biometryCurrentSet, .devicePasscode, .and])
        XCTAssertEqual(try AccessControl(parsing: "Device-Passcode", or: false, and: false), .devicePasscode)
        // Keygate's own password-bound flag keeps the name current-set (and password-current-set).
        XCTAssertEqual(try AccessControl(parsing: "current-set", or: false, and: false), .currentSet)
        XCTAssertEqual(try AccessControl(parsing: "password-current-set", or: false, and: false), .currentSet)
    }

    func test_parsing_rejectsAnUnknownName_listingTheValidOnes() {
        let error = assertThrowsKeychainError(.param) { try AccessControl(parsing: "user-presence,face-id", or: false, and: false) }
        XCTAssertTrue(error?.message.contains("\"face-id\"") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("user-presence, device-passcode, biometry-any, biometry-current-set, current-set") ?? false,
                      error?.message ?? "")
    }

    func test_parsing_rejectsEmptyNames_andAnEmptyList() {
        assertThrowsKeychainError(.param) { try AccessControl(parsing: "device-passcode,,current-set", or: false, and: false) }
        assertThrowsKeychainError(.param) { try AccessControl(parsing: "", or: false, and: false) }
    }

    func test_parsing_validates_soAppleRefusalsCannotBeParsed() {
        assertThrowsKeychainError(.param) { try AccessControl(parsing: "user-presence,device-passcode", or: true, and: false) }
        assertThrowsKeychainError(.param) { try AccessControl(parsing: "biometry-any,biometry-current-set", or: false, and: false) }
        assertThrowsKeychainError(.param) { try AccessControl(parsing: "device-passcode,biometry-any", or: true, and: true) }
        assertThrowsKeychainError(.param) { try AccessControl(attributeValue: "user-presence,current-set;or") }
    }

    func test_attributeValue_rejectsABadCombinationSuffix() {
        let error = assertThrowsKeychainError(.param) { try AccessControl(attributeValue: "device-passcode;xor") }
        XCTAssertTrue(error?.message.contains(";or") ?? false, error?.message ?? "")
        assertThrowsKeychainError(.param) { try AccessControl(attributeValue: "device-passcode;or;and") }
    }

    func test_codable_storesTheRawValue() throws {
        let flags: AccessControl = [.devicePasscode, .biometryAny, .or]
        let data = try JSONEncoder().encode([flags])
        XCTAssertEqual(String(decoding: data, as: UTF8.self), "[16402]")
        XCTAssertEqual(try JSONDecoder().decode([AccessControl].self, from: data), [flags])
    }
}
