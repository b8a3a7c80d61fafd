// Class keys: one per accessibility class, the same every time for one master key.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class ClassKeysTests: XCTestCase {
    func test_derive_givesADifferentKeyPerClass() throws {
        let master = try SecureBytes.random(count: 32)
        let keys = try Accessibility.allCases.map { try ClassKeys.derive(masterKey: master, for: $0) }
        for i in keys.indices {
            XCTAssertEqual(keys[i].count, 32)
            for j in keys.indices where j != i {
                XCTAssertFalse(keys[i].constantTimeEquals(keys[j]), "classes \(i) and \(j) share a key")
            }
        }
    }

    func test_derive_isDeterministic_andDependsOnTheMasterKey() throws {
        let master = try SecureBytes.random(count: 32)
        let copy = try secureBytes(master.unprotectedCopy())
        let a = try ClassKeys.derive(masterKey: master, for: .whenUnlocked)
        XCTAssertTrue(a.constantTimeEquals(try ClassKeys.derive(masterKey: copy, for: .whenUnlocked)))
        let other = try ClassKeys.derive(masterKey: SecureBytes.random(count: 32), for: .whenUnlocked)
        XCTAssertFalse(a.constantTimeEquals(other))
    }

    func test_derive_throwsParam_forAMasterKeyOfTheWrongSize() throws {
        assertThrowsKeychainError(.param) { try ClassKeys.derive(masterKey: SecureBytes.random(count: 16), for: .whenUnlocked) }
    }
}
