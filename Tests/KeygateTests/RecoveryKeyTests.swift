// The recovery key's human form: readable groups, a checksum that catches typos, and
// a parser that forgives case, spacing and look-alike letters.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class RecoveryKeyTests: XCTestCase {
    private func text(_ bytes: SecureBytes) -> String { String(decoding: bytes.unprotectedCopy(), as: UTF8.self) }

    func test_generate_gives32RandomBytes() throws {
        let a = try RecoveryKey.generate(), b = try RecoveryKey.generate()
        XCTAssertEqual(a.count, 32)
        XCTAssertFalse(a.constantTimeEquals(b))
    }

    func test_format_gives14DashSeparatedGroupsOf4() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        let groups = formatted.split(separator: "-", omittingEmptySubsequences: false)
        XCTAssertEqual(groups.count, 14, formatted)
        let alphabet = Set("0123456789ABCDEFGHJKMNPQRSTVWXYZ")
        for group in groups {
            XCTAssertEqual(group.count, 4, formatted)
            XCTAssertTrue(group.allSatisfy { alphabet.contains($0) }, formatted)
        }
    }

    func test_parse_ofFormat_returnsTheKey() throws {
        for _ in 0..<20 {
            let key = try RecoveryKey.generate()
            XCTAssertTrue(try RecoveryKey.parse(RecoveryKey.format(key)).constantTimeEquals(key))
        }
    }

    func test_parse_toleratesCaseSpacesMissingDashesAndLookAlikes() throws {
        let key = try RecoveryKey.generate()
        let formatted = text(try RecoveryKey.format(key))
        let variants = [
            formatted.lowercased(),
            formatted.replacingOccurrences(of: "-", with: ""),
            formatted.replacingOccurrences(of: "-", with: " ") + "\n",
            "  " + formatted.replacingOccurrences(of: "0", with: "O").replacingOccurrences(of: "1", with: "l"),
            formatted.replacingOccurrences(of: "1", with: "i"),
        ]
        for variant in variants {
            XCTAssertTrue(try RecoveryKey.parse(secureBytes(variant)).constantTimeEquals(key), variant)
        }
    }

    func test_parse_failsAuth_whenOneSymbolIsMistyped() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        var characters = Array(formatted)
        for index in [0, 7, 30, characters.count - 1] {
            let original = characters[index]
            characters[index] = original == "A" ? "B" : "A"
            assertThrowsKeychainError(.authFailed) { try RecoveryKey.parse(secureBytes(String(characters))) }
            characters[index] = original
        }
    }

    func test_parse_throwsParam_forWrongLengthOrForeignCharacters() throws {
        let formatted = text(try RecoveryKey.format(RecoveryKey.generate()))
        let short = assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes(String(formatted.dropLast()))) }
        XCTAssertTrue(short?.message.contains("this one has 55") ?? false, short?.message ?? "")
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes(formatted + "A")) }
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes("U" + formatted.dropFirst())) }
        assertThrowsKeychainError(.param) { try RecoveryKey.parse(secureBytes("")) }
    }
}
