// What the password prompt says about the item it opens, in a Mac's words ("… stored in
// "vpn" in your keychain."): the service, else the account for an item with no service,
// and no name at all for an item with neither. Never `stored in ""`.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

final class PromptReasonTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var person = ScriptedPrompter([])
    private let account = "acct-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        let keychain = try InProcessKeychain()
        environment = keychain
        person = ScriptedPrompter(Array(repeating: keychain.password, count: 6))
        KeygateSecurityConfiguration.prompter = person
    }

    override func tearDownWithError() throws {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(service: ""))
        KeygateSecurityConfiguration.prompter = nil
        environment?.tearDown()
    }

    /// Adds a user-presence item with these primary-key fields, reads it, and returns what the
    /// person was shown for the read.
    private func shownReading(_ fields: [String: Any]) throws -> String {
        var error: Unmanaged<CFError>?
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, &error))
        let item = fields.merging([kSecClass as String: kSecClassGenericPassword]) { $1 }
        XCTAssertEqual(SecItemAdd(item.merging([kSecValueData as String: Data("s".utf8), kSecAttrAccessControl as String: access]) { $1 }
            as CFDictionary, nil), errSecSuccess)
        let before = person.prompts.count + person.notices.count
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(item.merging([kSecReturnData as String: true]) { $1 } as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("s".utf8))
        let shown = (person.prompts + person.notices).joined(separator: "\n")
        XCTAssertGreaterThan(person.prompts.count + person.notices.count, before, "the read asked")
        XCTAssertTrue(shown.contains("wants to use your confidential information"), shown)
        XCTAssertEqual(SecItemDelete(item as CFDictionary), errSecSuccess)
        return shown
    }

    func test_anItemWithNoService_isNamedByItsAccount() throws {
        let shown = try shownReading([kSecAttrAccount as String: account])
        XCTAssertTrue(shown.contains("stored in \"\(account)\" in your keychain."), shown)
        XCTAssertFalse(shown.contains("stored in \"\""), shown)
    }

    func test_anItemWithNeitherServiceNorAccount_isNotNamed() throws {
        let shown = try shownReading([:])
        XCTAssertTrue(shown.contains("confidential information stored in your keychain."), shown)
        XCTAssertFalse(shown.contains("stored in \"\""), shown)
    }
}
