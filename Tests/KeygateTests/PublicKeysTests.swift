// keys.json: round trip, absent, garbage and future formats.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class PublicKeysTests: XCTestCase {
    func test_saveThenLoad_roundTrips() throws {
        let folder = try makeTemporaryFolder(self) + "/keygate"
        let presence = Sodium.randomBytes(32), current = Sodium.randomBytes(32), classKey = Sodium.randomBytes(32)
        let keys = PublicKeys(classKeys: [Accessibility.whenUnlocked.rawValue: PublicKeys.encodeKey(classKey)],
                              presence: PublicKeys.encodeKey(presence), currentSet: PublicKeys.encodeKey(current))
        try keys.save(directory: folder)
        let loaded = try XCTUnwrap(try PublicKeys.load(directory: folder))
        XCTAssertEqual(loaded, keys)
        XCTAssertEqual(loaded.classKey(.whenUnlocked), classKey)
        XCTAssertNil(loaded.classKey(.afterFirstUnlock))
        XCTAssertEqual(loaded.presenceKey, presence)
        XCTAssertEqual(loaded.currentSetKey, current)
        XCTAssertEqual(loaded.version, 1)
    }

    func test_load_returnsNil_whenAbsent() throws {
        XCTAssertNil(try PublicKeys.load(directory: try makeTemporaryFolder(self)))
    }

    func test_load_throwsDecode_forGarbageBadKeysOrAFutureFormat() throws {
        let folder = try makeTemporaryFolder(self)
        let path = PublicKeys.path(directory: folder)
        for text in ["{garbage", "", "[]", #"{"version":1}"#,
                     #"{"version":1,"classKeys":{"when-unlocked":"AAAA"}}"#,
                     #"{"version":1,"classKeys":{},"presence":"not base64!"}"#] {
            try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
            let error = assertThrowsKeychainError(.decode) { try PublicKeys.load(directory: folder) }
            XCTAssertTrue(error?.message.contains(path) ?? false, error?.message ?? "")
        }
        try AtomicFile.write(Array(#"{"version":9,"classKeys":{}}"#.utf8), to: path, mode: 0o600)
        let error = assertThrowsKeychainError(.decode) { try PublicKeys.load(directory: folder) }
        XCTAssertTrue(error?.message.contains("upgrade keygate") ?? false, error?.message ?? "")
    }
}
