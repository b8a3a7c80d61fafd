import Keygate
import XCTest

final class KeychainErrorTests: XCTestCase {
    func test_statusAndExitCode_matchAppleAndMacOSSecurity() {
        let expected: [(KeychainError.Code, OSStatus, Int32)] = [
            (.itemNotFound, -25300, 44), (.duplicateItem, -25299, 45), (.authFailed, -25293, 51),
            (.userCanceled, -128, 128), (.interactionNotAllowed, -25308, 36), (.notAvailable, -25291, 53),
            (.param, -50, 206), (.decode, -26275, 93),
        ]
        XCTAssertEqual(expected.count, KeychainError.Code.allCases.count, "every case is covered")
        for (code, status, exit) in expected {
            let e = KeychainError(code, "x")
            XCTAssertEqual(e.status, status, "\(code)")
            XCTAssertEqual(e.exitCode, exit, "\(code)")
            XCTAssertTrue(code.name.hasPrefix("errSec"))
        }
    }

    func test_exitCodes_areDistinct() {
        let exits = KeychainError.Code.allCases.map { KeychainError($0, "").exitCode }
        XCTAssertEqual(Set(exits).count, exits.count)
    }
}
