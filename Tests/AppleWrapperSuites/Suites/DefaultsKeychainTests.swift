// The UserDefaults-like wrapper's own suite, in SwiftKeychainWrapper's test style: the
// standard instance and a named one, every typed setter and getter, removal, and keys.
// Imports Foundation and XCTest only.
import Foundation
import XCTest

final class DefaultsKeychainTests: WrapperSuiteCase {
    private let keychain = DefaultsKeychain(serviceName: "com.example.defaults-tests")

    override func setUpWithError() throws {
        try super.setUpWithError()
        XCTAssertTrue(keychain.removeAllKeys())
        XCTAssertTrue(DefaultsKeychain.standard.removeAllKeys())
    }

    func testStandardInstance_isNamedAfterTheBundle_orTheFallback() {
        // Linux Foundation: Bundle.main.bundleIdentifier is nil for a program, so the fallback.
        XCTAssertEqual(DefaultsKeychain.standard.serviceName, Bundle.main.bundleIdentifier ?? "DefaultsKeychain")
        XCTAssertTrue(DefaultsKeychain.standard.set("v", forKey: "standard"))
        XCTAssertEqual(DefaultsKeychain.standard.string(forKey: "standard"), "v")
        XCTAssertNil(keychain.string(forKey: "standard"), "another service does not see it")
    }

    func testTypedValues_roundTrip() {
        XCTAssertTrue(keychain.set("hello ✓", forKey: "string"))
        XCTAssertTrue(keychain.set(42, forKey: "int"))
        XCTAssertTrue(keychain.set(2.5, forKey: "double"))
        XCTAssertTrue(keychain.set(true, forKey: "bool"))
        XCTAssertTrue(keychain.set(Data([9, 8, 7]), forKey: "data"))
        XCTAssertEqual(keychain.string(forKey: "string"), "hello ✓")
        XCTAssertEqual(keychain.integer(forKey: "int"), 42)
        XCTAssertEqual(keychain.double(forKey: "double"), 2.5)
        XCTAssertEqual(keychain.bool(forKey: "bool"), true)
        XCTAssertEqual(keychain.data(forKey: "data"), Data([9, 8, 7]))
        XCTAssertNil(keychain.string(forKey: "missing"))
    }

    func testSettingAgain_overwrites() {
        XCTAssertTrue(keychain.set("one", forKey: "k"))
        XCTAssertTrue(keychain.set("two", forKey: "k"))
        XCTAssertEqual(keychain.string(forKey: "k"), "two")
        XCTAssertEqual(keychain.allKeys(), ["k"])
    }

    func testHasValue_andRemoveObject() {
        XCTAssertFalse(keychain.hasValue(forKey: "k"))
        keychain.set("v", forKey: "k")
        XCTAssertTrue(keychain.hasValue(forKey: "k"))
        XCTAssertTrue(keychain.removeObject(forKey: "k"))
        XCTAssertFalse(keychain.hasValue(forKey: "k"))
        XCTAssertFalse(keychain.removeObject(forKey: "k"), "nothing left to remove")
    }

    func testAccessibility_isKeptPerKey_andChangedByASecondSet() {
        keychain.set("a", forKey: "k", withAccessibility: kSecAttrAccessibleAfterFirstUnlock)
        XCTAssertEqual(keychain.accessibilityOfKey("k"), kSecAttrAccessibleAfterFirstUnlock)
        keychain.set("b", forKey: "k", withAccessibility: kSecAttrAccessibleWhenUnlocked)
        XCTAssertEqual(keychain.accessibilityOfKey("k"), kSecAttrAccessibleWhenUnlocked)
        XCTAssertEqual(keychain.string(forKey: "k"), "b")
    }

    func testAllKeys_andRemoveAllKeys() {
        for key in ["a", "b", "c"] { keychain.set(key, forKey: key) }
        XCTAssertEqual(keychain.allKeys(), ["a", "b", "c"])
        XCTAssertTrue(keychain.removeAllKeys())
        XCTAssertEqual(keychain.allKeys(), [])
    }
}
