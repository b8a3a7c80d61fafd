// Items without access control never need the gatekeeper: once the keychain is unlocked,
// adding, reading, updating, listing and deleting them go through the user's own keys (the
// kernel keyring) and the store only. Proved with the gatekeeper replaced by a program that
// records each start and fails, as a half-finished upgrade would leave it: every plain
// SecItem call still succeeds and the stand-in is never started, while an item with access
// control, which does need the gatekeeper, starts it (so the stand-in is the one in use).
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

final class GatekeeperIndependenceTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var folder = ""

    override func setUpWithError() throws {
        let keychain = try InProcessKeychain()
        environment = keychain
        // Created and unlocked with the real gatekeeper, as a user's keychain is.
        _ = try KeychainOperations(prompter: ScriptedPrompter([keychain.password])).initialize()
        folder = NSTemporaryDirectory() + "keygate-gk-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let stub = folder + "/keygate-gatekeeper"
        _ = FileManager.default.createFile(atPath: stub, contents: Data("#!/bin/sh\necho started >> '\(folder)/starts'\nexit 1\n".utf8),
                                       attributes: [.posixPermissions: 0o755])
        setenv("KEYGATE_TEST_GATEKEEPER", stub, 1)
        // No one to ask: a plain item must never need a prompt either.
        KeygateSecurityConfiguration.prompter = ScriptedPrompter([], available: false)
    }

    override func tearDownWithError() throws {
        unsetenv("KEYGATE_TEST_GATEKEEPER")
        KeygateSecurityConfiguration.prompter = nil
        try? FileManager.default.removeItem(atPath: folder)
        environment?.tearDown()
    }

    private var starts: Int {
        ((try? String(contentsOfFile: folder + "/starts", encoding: .utf8)) ?? "").split(separator: "\n").count
    }

    func test_plainItems_addReadUpdateListAndDelete_withTheGatekeeperBroken() throws {
        let service = "gk-free-\(UUID().uuidString.prefix(8))"
        func query(_ account: String? = nil) -> [String: Any] {
            var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            if let account = account { q[kSecAttrAccount as String] = account }
            return q
        }
        for (account, accessible) in [("unlocked", kSecAttrAccessibleWhenUnlocked), ("first", kSecAttrAccessibleAfterFirstUnlock)] {
            var add = query(account)
            add[kSecValueData as String] = Data(account.utf8)
            add[kSecAttrAccessible as String] = accessible
            XCTAssertEqual(SecItemAdd(add as CFDictionary, nil), errSecSuccess, account)
        }
        var read = query("unlocked")
        read[kSecReturnData as String] = true
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(read as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("unlocked".utf8))
        XCTAssertEqual(SecItemUpdate(query("first") as CFDictionary, [kSecValueData as String: Data("new".utf8)] as CFDictionary),
                       errSecSuccess)
        XCTAssertEqual(SecItemUpdate(query("first") as CFDictionary, [kSecAttrLabel as String: "renamed"] as CFDictionary), errSecSuccess)
        var all = query()
        all[kSecReturnData as String] = true
        all[kSecMatchLimit as String] = kSecMatchLimitAll
        XCTAssertEqual(SecItemCopyMatching(all as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? [Data], [Data("unlocked".utf8), Data("new".utf8)])
        XCTAssertEqual(SecItemDelete(query() as CFDictionary), errSecSuccess)
        XCTAssertEqual(starts, 0, "no plain operation started the gatekeeper")

        // The stand-in is the gatekeeper in use: an item with access control needs it, and fails.
        var error: Unmanaged<CFError>?
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, &error))
        var gated = query("gated")
        gated[kSecValueData as String] = Data("g".utf8)
        gated[kSecAttrAccessControl as String] = access
        XCTAssertNotEqual(SecItemAdd(gated as CFDictionary, nil), errSecSuccess)
        XCTAssertGreaterThan(starts, 0, "sealing an item with access control asked the gatekeeper")
    }
}
