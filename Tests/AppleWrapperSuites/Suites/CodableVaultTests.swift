// The Codable wrapper's own suite: round trips of nested values, upserts, errors by code,
// and key order. Imports XCTest only, as many wrappers' test files do.
import XCTest

private struct Profile: Codable, Equatable {
    struct Token: Codable, Equatable {
        let value: String
        let expires: Date
    }
    let name: String
    let scopes: [String]
    let token: Token?
}

final class CodableVaultTests: WrapperSuiteCase {
    private let vault = CodableVault(service: "com.example.codable-tests")
    private let sample = Profile(name: "Ada", scopes: ["read", "write"],
                                 token: .init(value: "t-1", expires: Date(timeIntervalSince1970: 2_000_000_000)))

    override func setUpWithError() throws {
        try super.setUpWithError()
        try vault.deleteAll()
    }

    func testSaveAndLoad_roundTripsANestedValue() throws {
        try vault.save(sample, for: "profile")
        XCTAssertEqual(try vault.load(Profile.self, for: "profile"), sample)
        try vault.save(["a": 1, "b": 2], for: "map")
        XCTAssertEqual(try vault.load([String: Int].self, for: "map"), ["a": 1, "b": 2])
    }

    func testSavingAgain_replacesTheValue_keepingOneItem() throws {
        try vault.save(sample, for: "profile")
        let changed = Profile(name: "Ada", scopes: [], token: nil)
        try vault.save(changed, for: "profile")
        XCTAssertEqual(try vault.load(Profile.self, for: "profile"), changed)
        XCTAssertEqual(try vault.keys(), ["profile"])
    }

    func testMissingItem_isItemNotFound_withApplesMessage() {
        XCTAssertThrowsError(try vault.load(Profile.self, for: "missing")) { error in
            let vaultError = error as? VaultError
            XCTAssertEqual(vaultError?.code, .itemNotFound)
            XCTAssertEqual(vaultError?.status, errSecItemNotFound)
            XCTAssertEqual(vaultError?.errorDescription?.hasPrefix("The specified item could not be found in the keychain."), true,
                           vaultError?.errorDescription ?? "")
        }
        XCTAssertThrowsError(try vault.delete("missing")) { XCTAssertEqual(($0 as? VaultError)?.code, .itemNotFound) }
    }

    func testBytesThatAreNotJSON_failToDecode() throws {
        try vault.saveData(Data([0xff, 0x00, 0x01]), for: "raw")
        XCTAssertThrowsError(try vault.load(Profile.self, for: "raw")) { XCTAssertEqual(($0 as? VaultError)?.code, .decodingFailed) }
    }

    func testKeys_comeInTheOrderTheyWereFirstSaved_andContainsFollowsDeletes() throws {
        for key in ["c", "a", "b"] { try vault.save(sample, for: key) }
        try vault.save(sample, for: "c")   // an update does not move it
        XCTAssertEqual(try vault.keys(), ["c", "a", "b"])
        XCTAssertTrue(vault.contains("a"))
        try vault.delete("a")
        XCTAssertFalse(vault.contains("a"))
        XCTAssertEqual(try vault.keys(), ["c", "b"])
    }
}
