// Argon2id key derivation: deterministic, password- and salt-sensitive, bounded, and
// calibrated to at least libsodium's INTERACTIVE cost.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class PasswordKDFTests: XCTestCase {
    let cost = KDFParameters.testing
    let salt = Array(repeating: UInt8(7), count: 16)

    func test_deriveKey_isDeterministic_forTheSamePasswordAndSalt() throws {
        let a = try cost.deriveKey(password: secureBytes("correct horse"), salt: salt)
        let b = try cost.deriveKey(password: secureBytes("correct horse"), salt: salt)
        XCTAssertEqual(a.count, 32)
        XCTAssertTrue(a.constantTimeEquals(b))
    }

    func test_deriveKey_differs_forADifferentPasswordOrSalt() throws {
        let a = try cost.deriveKey(password: secureBytes("correct horse"), salt: salt)
        XCTAssertFalse(a.constantTimeEquals(try cost.deriveKey(password: secureBytes("correct horsf"), salt: salt)))
        XCTAssertFalse(a.constantTimeEquals(try cost.deriveKey(password: secureBytes("correct horse"), salt: Array(repeating: 8, count: 16))))
        XCTAssertFalse(a.constantTimeEquals(try cost.deriveKey(password: SecureBytes(count: 0), salt: salt)))
    }

    func test_deriveKey_refusesUnknownAlgorithmsBadSaltsAndUnboundedCosts() throws {
        var unknown = cost
        unknown.algorithm = "scrypt"
        assertThrowsKeychainError(.decode) { try unknown.deriveKey(password: secureBytes("pw"), salt: self.salt) }
        assertThrowsKeychainError(.decode) { try self.cost.deriveKey(password: secureBytes("pw"), salt: [1, 2, 3]) }
        let huge = KDFParameters(opsLimit: 2, memLimitBytes: 64 * 1024 * 1024 * 1024)
        assertThrowsKeychainError(.decode) { try huge.deriveKey(password: secureBytes("pw"), salt: self.salt) }
        let endless = KDFParameters(opsLimit: 1_000_000, memLimitBytes: 8 * 1024 * 1024)
        assertThrowsKeychainError(.decode) { try endless.deriveKey(password: secureBytes("pw"), salt: self.salt) }
    }

    func test_kdfParameters_roundTripThroughJSON() throws {
        let original = KDFParameters(opsLimit: 3, memLimitBytes: 128 * 1024 * 1024, calibratedMilliseconds: 480)
        let decoded = try JSONDecoder().decode(KDFParameters.self, from: JSONEncoder().encode(original))
        XCTAssertEqual(decoded, original)
    }

    func test_calibrate_picksAtLeastInteractiveCost_andRecordsTheMeasuredTime() throws {
        let chosen = try KDFParameters.calibrate()
        print("calibrated Argon2id cost: ops \(chosen.opsLimit), \(chosen.memLimitBytes / (1024 * 1024)) MiB, measured \(chosen.calibratedMilliseconds.map(String.init) ?? "nil") ms")
        XCTAssertEqual(chosen.algorithm, "argon2id13")
        XCTAssertGreaterThanOrEqual(chosen.opsLimit, 2)
        XCTAssertGreaterThanOrEqual(chosen.memLimitBytes, 64 * 1024 * 1024)
        XCTAssertLessThanOrEqual(chosen.memLimitBytes, 256 * 1024 * 1024)
        let measured = try XCTUnwrap(chosen.calibratedMilliseconds)
        XCTAssertGreaterThan(measured, 0)
        XCTAssertNoThrow(try chosen.validateForNewProtector())
    }
}
