// A gated item's label through the Apple layer (SecItemAdd with a SecAccessControl of user
// presence), on the embedded store of a real keychain in this process (InProcessKeychain: real
// libpam through pam_matrix, the real kernel keyring, the gatekeeper): the database file and its
// -wal hold no plaintext of it; SecItemCopyMatching returns it as kSecAttrLabel, and finds the item
// by it, while the keychain is unlocked; locked, it returns no kSecAttrLabel and a search by the
// label finds nothing, exactly as a search by a label no item has.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

final class GatedLabelSecItemTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself
    private var environment: InProcessKeychain?
    private var service = ""
    private var store: String?

    override func setUpWithError() throws {
        store = ProcessInfo.processInfo.environment["KEYGATE_STORE"]
        setenv("KEYGATE_STORE", "embedded", 1)
        (environment, service, _) = try AppleStack.start(servicePrefix: "sec-label")
    }

    override func tearDownWithError() throws {
        AppleStack.end(environment, deleting: [service])
        if let store { setenv("KEYGATE_STORE", store, 1) } else { unsetenv("KEYGATE_STORE") }
    }

    private func fileBytes() throws -> Data {
        let db = (environment?.dataHome ?? "") + "/keygate/items.sqlite"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: db))
        if let wal = try? Data(contentsOf: URL(fileURLWithPath: db + "-wal")) { bytes.append(wal) }   // try?: no -wal is no bytes
        return bytes
    }

    private func attributes(_ extra: [String: Any]) -> (OSStatus, [[String: Any]]) {
        var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
        query.merge(extra) { $1 }
        var result: AnyObject?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result as? [[String: Any]] ?? [])
    }

    /// Adds a user-presence generic password of `account` labelled `label` to this test's service.
    private func addGated(account: String, label: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil))
        XCTAssertEqual(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                   kSecAttrAccount as String: account, kSecAttrLabel as String: label,
                                   kSecAttrAccessControl as String: access,
                                   kSecValueData as String: Data("gated".utf8)] as CFDictionary, nil), errSecSuccess,
                       file: file, line: line)
    }

    /// Asserts that the one item of `account` lists, with `label` as its kSecAttrLabel.
    private func assertLabel(of account: String, is label: String, _ why: String, file: StaticString = #filePath, line: UInt = #line) {
        let (status, items) = attributes([kSecAttrAccount as String: account])
        XCTAssertEqual(status, errSecSuccess, why, file: file, line: line)
        XCTAssertEqual(items.first?[kSecAttrLabel as String] as? String, label, "\(why): \(items)", file: file, line: line)
    }

    func test_SecItemAdd_withUserPresence_sealsTheLabel_andCopyMatchingGivesItWhileUnlocked() throws {
        let gated = "SECITEM-LABEL-\(UUID().uuidString.prefix(8))"
        let open = "SECITEM-OPEN-\(UUID().uuidString.prefix(8))"
        try addGated(account: "g", label: gated)
        XCTAssertEqual(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                   kSecAttrAccount as String: "o", kSecAttrLabel as String: open,
                                   kSecValueData as String: Data("open".utf8)] as CFDictionary, nil), errSecSuccess)

        let bytes = try fileBytes()
        XCTAssertNil(bytes.range(of: Data(gated.utf8)), "no plaintext of the gated item's label in items.sqlite or its -wal")
        XCTAssertNotNil(bytes.range(of: Data(open.utf8)), "an ungated item's label is there as text (the search sees the bytes)")

        assertLabel(of: "g", is: gated, "the real label while unlocked")
        XCTAssertEqual(attributes([kSecAttrLabel as String: gated]).0, errSecSuccess, "found by its label while unlocked")

        try KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        let (lockedStatus, lockedItems) = attributes([kSecAttrAccount as String: "g"])
        XCTAssertEqual(lockedStatus, errSecSuccess, "the item still lists")
        XCTAssertEqual(lockedItems.count, 1)
        XCTAssertNil(lockedItems.first?[kSecAttrLabel as String], "locked: no label, never the text: \(lockedItems)")
        XCTAssertFalse("\(lockedItems)".contains(gated))
        XCTAssertEqual(attributes([kSecAttrLabel as String: gated]).0, errSecItemNotFound, "locked: the sealed label matches nothing")
        XCTAssertEqual(attributes([kSecAttrLabel as String: "NO-SUCH-LABEL"]).0, errSecItemNotFound, "as a label no item has")
        XCTAssertEqual(attributes([kSecAttrLabel as String: open]).0, errSecSuccess, "an ungated label matches, locked or not")
    }

    /// SecItemUpdate of a gated item's label (attributes only: no prompt) seals the new label; the
    /// old one is gone from the file too (secure_delete), and the new one reads back.
    func test_SecItemUpdate_ofAGatedItemsLabel_sealsTheNewOne_andLeavesNoTextOfEither() throws {
        let first = "SECITEM-FIRST-\(UUID().uuidString.prefix(8))"
        let second = "SECITEM-SECOND-\(UUID().uuidString.prefix(8))"
        try addGated(account: "u", label: first)
        let match: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrLabel as String: first]
        XCTAssertEqual(SecItemUpdate(match as CFDictionary, [kSecAttrLabel as String: second] as CFDictionary), errSecSuccess,
                       "found by its sealed label, updated")
        let bytes = try fileBytes()
        XCTAssertNil(bytes.range(of: Data(first.utf8)), "no text of the old label")
        XCTAssertNil(bytes.range(of: Data(second.utf8)), "no text of the new label")
        assertLabel(of: "u", is: second, "the new label reads back")
        XCTAssertEqual(attributes([kSecAttrLabel as String: first]).0, errSecItemNotFound)
    }
}
