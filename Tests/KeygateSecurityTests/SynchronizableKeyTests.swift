// kSecAttrSynchronizable is part of an item's primary key, as on Apple: a synchronizable and
// a non-synchronizable item of one service and account are two items; a query without the
// attribute sees only the non-synchronizable one; kSecAttrSynchronizableAny sees both; an
// update can move an item between the two without a prompt; and a synchronizable item an
// earlier Keygate stored (before the flag joined the key) is read as it was.
import Foundation
import Keygate
@testable import KeygateSecurity
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class SynchronizableKeyTests: SecItemKeyTestCase {
    override class var servicePrefix: String { "sync-key" }

    private func query(_ sync: Any? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: "token"]
        if let sync = sync { q[kSecAttrSynchronizable as String] = sync }
        return q.merging(extra) { $1 }
    }

    func test_synchronizableAndLocalItems_ofOneServiceAndAccount_areTwoItems() {
        XCTAssertEqual(SecItemAdd(query(kCFBooleanTrue as Any, [kSecValueData as String: Data("cloud".utf8)]) as CFDictionary, nil),
                       errSecSuccess)
        XCTAssertEqual(SecItemAdd(query(nil, [kSecValueData as String: Data("local".utf8)]) as CFDictionary, nil), errSecSuccess,
                       "the local add does not collide with the synchronizable item")
        XCTAssertEqual(SecItemAdd(query(false, [kSecValueData as String: Data("again".utf8)]) as CFDictionary, nil), errSecDuplicateItem)
        XCTAssertEqual(SecItemAdd(query(true, [kSecValueData as String: Data("again".utf8)]) as CFDictionary, nil), errSecDuplicateItem)
        XCTAssertEqual(secrets(query()), ["local"], "no kSecAttrSynchronizable: the local item only")
        XCTAssertEqual(secrets(query(true)), ["cloud"])
        XCTAssertEqual(secrets(query(kSecAttrSynchronizableAny)), ["cloud", "local"], "Any: both, in creation order")
        XCTAssertEqual(SecItemDelete(query() as CFDictionary), errSecSuccess)
        XCTAssertEqual(secrets(query(kSecAttrSynchronizableAny)), ["cloud"], "deleting the local item leaves its twin")
    }

    func test_updatingTheFlag_movesTheItem_withoutAPrompt_andRefusesToLandOnItsTwin() {
        XCTAssertEqual(SecItemAdd(query(nil, [kSecValueData as String: Data("v".utf8)]) as CFDictionary, nil), errSecSuccess)
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        let prompts = person.prompts.count
        XCTAssertEqual(SecItemUpdate(query() as CFDictionary, [kSecAttrSynchronizable as String: true] as CFDictionary), errSecSuccess)
        XCTAssertEqual(person.prompts.count, prompts, "flipping the flag keeps the sealed blob: no prompt, even locked")
        XCTAssertEqual(SecItemCopyMatching(query() as CFDictionary, nil), errSecItemNotFound)
        person.enqueue(environment?.password)   // a plain add seals with the class key: the locked keychain is unlocked
        XCTAssertEqual(SecItemAdd(query(nil, [kSecValueData as String: Data("w".utf8)]) as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(SecItemUpdate(query() as CFDictionary, [kSecAttrSynchronizable as String: true] as CFDictionary),
                       errSecDuplicateItem, "the synchronizable key is taken")
        XCTAssertEqual(secrets(query(true)), ["v"])
        XCTAssertEqual(secrets(query()), ["w"])
    }

    func test_aSynchronizableItemStoredBeforeTheFlagJoinedTheKey_isReadAsItWas() throws {
        // The embedded store keeps the key in its own index, so an earlier file needs moving.
        setenv("KEYGATE_STORE", "embedded", 1)
        XCTAssertEqual(SecItemAdd(query(true, [kSecValueData as String: Data("kept".utf8)]) as CFDictionary, nil), errSecSuccess)
        let file = try XCTUnwrap(environment?.dataHome).appending("/keygate/items.sqlite")
        XCTAssertTrue(FileManager.default.fileExists(atPath: file), file)
        // As a schema-1 Keygate left it: the key column holds the item's name without the flag
        // (the flag's field, 23 bytes, ends the key now).
        let db = try SQLiteDatabase(path: file, create: false)
        try db.execute("""
            UPDATE items SET identity = substr(identity, 1, length(identity) - 23);
            UPDATE schema_version SET version = 1; PRAGMA user_version = 1;
            """)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "1")

        XCTAssertEqual(secrets(query(true)), ["kept"], "the sealed secret opens after the move to the current schema")
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), String(EmbeddedStore.schemaVersion))
        XCTAssertEqual(SecItemAdd(query(nil, [kSecValueData as String: Data("twin".utf8)]) as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(secrets(query(kSecAttrSynchronizableAny)), ["kept", "twin"])
    }
}
