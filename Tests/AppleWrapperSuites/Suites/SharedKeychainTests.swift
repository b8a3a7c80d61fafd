// The shared wrapper's own suite, in Valet's test style: local and iCloud flavors of one
// identifier, two access groups, and migration. The access groups are the ones the app
// declares: on Apple its entitlement, here KEYGATE_ACCESS_GROUPS, set by whatever starts
// the program (the runner sets "TEAM.shared,TEAM.other"). Imports Security and XCTest.
import Security
import XCTest

final class SharedKeychainTests: WrapperSuiteCase {
    private let local = SharedKeychain(identifier: "com.example.shared-tests", accessGroup: "TEAM.shared")
    private let cloud = SharedKeychain(identifier: "com.example.shared-tests", accessGroup: "TEAM.shared", flavor: .iCloud)
    private let other = SharedKeychain(identifier: "com.example.shared-tests", accessGroup: "TEAM.other")

    override func setUpWithError() throws {
        try super.setUpWithError()
        XCTAssertEqual(local.removeAllObjects(), errSecSuccess)
        XCTAssertEqual(other.removeAllObjects(), errSecSuccess)
        // The iCloud items are left from the last run on purpose: local removals must not touch them.
    }

    func testLocalAndICloudFlavors_ofOneKey_areSeparateItems() {
        XCTAssertEqual(cloud.set(string: "cloud", forKey: "session"), errSecSuccess)
        XCTAssertEqual(local.set(string: "local", forKey: "session"), errSecSuccess)
        XCTAssertEqual(local.string(forKey: "session"), "local")
        XCTAssertEqual(cloud.string(forKey: "session"), "cloud")
        XCTAssertEqual(local.removeAllObjects(), errSecSuccess)
        XCTAssertNil(local.string(forKey: "session"))
        XCTAssertEqual(cloud.string(forKey: "session"), "cloud", "removing local items leaves synchronizable ones")
    }

    func testSetAgain_updates_andContainsFollowsRemoval() {
        XCTAssertFalse(local.containsObject(forKey: "k"))
        XCTAssertEqual(local.set(string: "1", forKey: "k"), errSecSuccess)
        XCTAssertEqual(local.set(string: "2", forKey: "k"), errSecSuccess)
        XCTAssertEqual(local.string(forKey: "k"), "2")
        XCTAssertEqual(local.allKeys(), ["k"])
        XCTAssertEqual(local.removeObject(forKey: "k"), errSecSuccess)
        XCTAssertFalse(local.containsObject(forKey: "k"))
        XCTAssertEqual(local.removeObject(forKey: "k"), errSecItemNotFound)
    }

    func testAccessGroups_keepTheirItemsApart() {
        XCTAssertEqual(local.set(string: "shared", forKey: "only-shared"), errSecSuccess)
        XCTAssertEqual(other.set(string: "other", forKey: "only-other"), errSecSuccess)
        XCTAssertEqual(local.allKeys(), ["only-shared"])
        XCTAssertEqual(other.allKeys(), ["only-other"])
        XCTAssertNil(other.string(forKey: "only-shared"))
        XCTAssertEqual(other.removeAllObjects(), errSecSuccess)
        XCTAssertEqual(local.string(forKey: "only-shared"), "shared", "another group's removeAll leaves it")
    }

    func testAnUndeclaredGroup_isMissingEntitlement() {
        let stranger = SharedKeychain(identifier: "com.example.shared-tests", accessGroup: "TEAM.undeclared")
        XCTAssertEqual(stranger.set(string: "x", forKey: "k"), errSecMissingEntitlement)
    }

    func testMigrateObjects_movesEveryItem_inOrder() {
        let source = SharedKeychain(identifier: "com.example.shared-tests.old", accessGroup: "TEAM.shared")
        XCTAssertEqual(source.removeAllObjects(), errSecSuccess)
        for key in ["one", "two", "three"] { XCTAssertEqual(source.set(string: key.uppercased(), forKey: key), errSecSuccess) }
        XCTAssertEqual(local.migrateObjects(from: source), errSecSuccess)
        XCTAssertEqual(local.allKeys(), ["one", "two", "three"])
        XCTAssertEqual(local.string(forKey: "two"), "TWO")
        XCTAssertEqual(source.allKeys(), [])
    }
}
