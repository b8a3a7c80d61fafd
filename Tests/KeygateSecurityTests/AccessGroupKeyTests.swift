// kSecAttrAccessGroup is part of an item's primary key, as on Apple: two generic (or internet)
// passwords that differ only in their group are two items; a query with a group matches only
// that group; a query without one matches every group the program may use (all of them when it
// declares none); an add without a group goes into the first declared group; an update moves an
// item between groups without a prompt and refuses to land on another item; a delete without a
// group removes the matches in every group the program may use. And a keychain made by the
// Keygate before the group joined the key (a frozen embedded store, FormatVectors/
// access-group-keychain) reads as it was, and takes the twins it could not hold before.
// Both stores: make check runs the class again with KEYGATE_STORE=embedded.
import Foundation
import Keygate
@testable import KeygateSecurity
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class AccessGroupKeyTests: SecItemKeyTestCase {
    override class var servicePrefix: String { "group-key" }

    override func setUpWithError() throws {
        try super.setUpWithError()
        unsetenv("KEYGATE_ACCESS_GROUPS")
    }

    override func tearDownWithError() throws {
        unsetenv("KEYGATE_ACCESS_GROUPS")
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(server: server))
        try super.tearDownWithError()
    }

    private var server: String { service + ".example" }

    private func generic(_ group: String? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: "token"]
        if let group { q[kSecAttrAccessGroup as String] = group }
        return q.merging(extra) { $1 }
    }

    private func internet(_ group: String? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: server,
                                kSecAttrAccount as String: "alice", kSecAttrProtocol as String: kSecAttrProtocolHTTPS]
        if let group { q[kSecAttrAccessGroup as String] = group }
        return q.merging(extra) { $1 }
    }

    private func add(_ q: [String: Any], _ value: String) -> OSStatus {
        SecItemAdd(q.merging([kSecValueData as String: Data(value.utf8)]) { $1 } as CFDictionary, nil)
    }

    /// The group of every match, in creation order ("" for none).
    private func groups(_ q: [String: Any]) -> [String] {
        var result: AnyObject?
        let all = q.merging([kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 }
        guard SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess else { return [] }
        return (result as? [[String: Any]] ?? []).map { $0[kSecAttrAccessGroup as String] as? String ?? "" }
    }

    func test_twoGenericPasswords_differingOnlyInTheGroup_areTwoItems() {
        XCTAssertEqual(add(generic("TEAM.app1"), "one"), errSecSuccess)
        XCTAssertEqual(add(generic("TEAM.app2"), "two"), errSecSuccess, "another group: another item, not a duplicate")
        XCTAssertEqual(add(generic(), "none"), errSecSuccess, "no group: a third item")
        XCTAssertEqual(add(generic("TEAM.app1"), "again"), errSecDuplicateItem)
        XCTAssertEqual(secrets(generic("TEAM.app1")), ["one"], "a query with a group matches only that group")
        XCTAssertEqual(secrets(generic("TEAM.app2")), ["two"])
        XCTAssertEqual(secrets(generic()), ["one", "two", "none"], "no group, none declared: every group")
        XCTAssertEqual(SecItemDelete(generic("TEAM.app1") as CFDictionary), errSecSuccess)
        XCTAssertEqual(secrets(generic()), ["two", "none"], "deleting by group leaves the other groups' items")
    }

    func test_twoInternetPasswords_differingOnlyInTheGroup_areTwoItems() {
        XCTAssertEqual(add(internet("TEAM.app1"), "one"), errSecSuccess)
        XCTAssertEqual(add(internet("TEAM.app2"), "two"), errSecSuccess)
        XCTAssertEqual(add(internet("TEAM.app2"), "again"), errSecDuplicateItem)
        XCTAssertEqual(secrets(internet("TEAM.app2")), ["two"])
        XCTAssertEqual(groups(internet()), ["TEAM.app1", "TEAM.app2"])
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(internet("TEAM.app1", [kSecReturnData as String: true]) as CFDictionary, &result),
                       errSecSuccess)
        XCTAssertEqual((result as? Data).map { String(decoding: $0, as: UTF8.self) }, "one", "read by group: no miss")
    }

    func test_declaredGroups_anAddWithoutAGroupGoesIntoTheFirst_andAQueryWithoutOneSeesOnlyTheDeclared() {
        XCTAssertEqual(add(generic("TEAM.other"), "another app's"), errSecSuccess)   // stored by a program that declares none
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.main,TEAM.shared", 1)
        XCTAssertEqual(add(generic(), "main"), errSecSuccess, "the default group, beside TEAM.other's twin")
        XCTAssertEqual(add(generic("TEAM.shared"), "shared"), errSecSuccess)
        XCTAssertEqual(add(generic(), "again"), errSecDuplicateItem, "the default group's item is there")
        XCTAssertEqual(groups(generic()), ["TEAM.main", "TEAM.shared"], "never TEAM.other's, which this program did not declare")
        XCTAssertEqual(secrets(generic("TEAM.main")), ["main"])
        XCTAssertEqual(add(generic("TEAM.other"), "x"), errSecMissingEntitlement)
        unsetenv("KEYGATE_ACCESS_GROUPS")
        XCTAssertEqual(groups(generic()), ["TEAM.other", "TEAM.main", "TEAM.shared"])
    }

    func test_update_movesAnItemBetweenGroups_withoutAPrompt_andRefusesToLandOnAnotherItem() {
        XCTAssertEqual(add(generic("TEAM.app1"), "v"), errSecSuccess)
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        let prompts = person.prompts.count
        XCTAssertEqual(SecItemUpdate(generic("TEAM.app1") as CFDictionary, [kSecAttrAccessGroup as String: "TEAM.app2"] as CFDictionary),
                       errSecSuccess)
        XCTAssertEqual(person.prompts.count, prompts, "moving between groups keeps the sealed blob: no prompt, even locked")
        person.enqueue(environment?.password)   // the reads below open the locked keychain
        XCTAssertEqual(SecItemCopyMatching(generic("TEAM.app1") as CFDictionary, nil), errSecItemNotFound)
        XCTAssertEqual(secrets(generic("TEAM.app2")), ["v"], "the secret opens in its new group")
        XCTAssertEqual(add(generic("TEAM.app1"), "w"), errSecSuccess)
        XCTAssertEqual(SecItemUpdate(generic("TEAM.app1") as CFDictionary, [kSecAttrAccessGroup as String: "TEAM.app2"] as CFDictionary),
                       errSecDuplicateItem, "TEAM.app2 holds that key now")
        XCTAssertEqual(secrets(generic("TEAM.app1")), ["w"], "nothing moved")
        XCTAssertEqual(secrets(generic("TEAM.app2")), ["v"])
    }

    func test_aDeleteWithoutAGroup_removesTheMatchesInEveryGroupTheProgramMayUse_only() {
        XCTAssertEqual(add(generic("TEAM.app1"), "1"), errSecSuccess)
        XCTAssertEqual(add(generic("TEAM.app2"), "2"), errSecSuccess)
        XCTAssertEqual(add(generic(), "0"), errSecSuccess)
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.app1", 1)
        XCTAssertEqual(SecItemDelete(generic() as CFDictionary), errSecSuccess)
        XCTAssertEqual(SecItemDelete(generic() as CFDictionary), errSecItemNotFound, "its group's and the ungrouped item are gone")
        unsetenv("KEYGATE_ACCESS_GROUPS")
        XCTAssertEqual(secrets(generic()), ["2"], "another program's group is untouched")
    }

    func test_aPersistentReference_namesTheItemsGroup_andOneMadeBeforeGroupsWereInTheKeyFindsItInAnyGroup() throws {
        XCTAssertEqual(add(generic("TEAM.app1"), "one"), errSecSuccess)
        XCTAssertEqual(add(generic("TEAM.app2"), "two"), errSecSuccess)
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("TEAM.app2", [kSecReturnPersistentRef as String: true]) as CFDictionary, &result),
                       errSecSuccess)
        let reference = try XCTUnwrap(result as? Data)
        XCTAssertEqual(secrets([kSecValuePersistentRef as String: reference]), ["two"])
        // As the Keygate before the group joined the key wrote it: no "g".
        let old = Data("keygate-ref-v1:".utf8) + Data("""
            {"c":"genp","s":"\(service)","a":"token","sv":"","p":"","po":0,"pa":"","d":"","t":""}
            """.utf8)
        XCTAssertEqual(secrets([kSecValuePersistentRef as String: old]), ["one", "two"])
    }

    func test_theCLI_declaresNoGroups_soItsGetFindsAnItemInAGroup_andSaysWhenTwoGroupsHoldIt() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary), "the built keygate")
        XCTAssertEqual(add(generic("TEAM.app1"), "one"), errSecSuccess)
        let get = [PackagePaths.keygateBinary, "get", "-s", service, "-a", "token"]
        var r = try Subprocess.run(get, timeout: 30)
        XCTAssertEqual(r.status, 0, r.err)
        XCTAssertEqual(r.out, "one", "the one item of that name, in its group")
        XCTAssertEqual(add(generic("TEAM.app2"), "two"), errSecSuccess)
        r = try Subprocess.run(get, timeout: 30)
        XCTAssertNotEqual(r.status, 0)
        XCTAssertTrue(r.err.contains("2 items for \(service)/token, in the access groups TEAM.app1, TEAM.app2"), r.err)
        XCTAssertEqual(add(generic(), "none"), errSecSuccess)
        r = try Subprocess.run(get, timeout: 30)
        XCTAssertEqual(r.out, "none", "the item in no group is the CLI's own: \(r.err)")
    }

    // MARK: A keychain the earlier Keygate made

    func test_aKeychainMadeBeforeTheGroupJoinedTheKey_readsAsItWas_andTakesTheTwinsItCouldNotHold() throws {
        let fixture = PackagePaths.root + "/Tests/KeygateTests/FormatVectors/access-group-keychain"
        let password = "access group keychain password"
        let home = try XCTUnwrap(environment?.dataHome)
        let fm = FileManager.default
        try fm.createDirectory(atPath: home + "/gate/state", withIntermediateDirectories: true)
        try fm.copyItem(atPath: fixture + "/data/keygate", toPath: home + "/keygate")
        try? fm.removeItem(atPath: home + "/gate/state/\(getuid())")
        try fm.copyItem(atPath: fixture + "/gate/state/0", toPath: home + "/gate/state/\(getuid())")
        for file in ["keys.json", "items.sqlite", "protectors/login.json", "protectors/recovery.json"] {
            try fm.setAttributes([.posixPermissions: 0o600], ofItemAtPath: home + "/keygate/" + file)
        }
        try fm.setAttributes([.posixPermissions: 0o700], ofItemAtPath: home + "/keygate")
        try fm.setAttributes([.posixPermissions: 0o400], ofItemAtPath: home + "/gate/state/\(getuid())/secret")
        let pam = try PAMMatrix(service: "keygate", user: String(cString: getpwuid(getuid()).pointee.pw_name), password: password)
        setenv("KEYGATE_TEST_PAM_CONFDIR", pam.confdir, 1)
        setenv("KEYGATE_STORE", "embedded", 1)
        KeygateSecurityConfiguration.prompter = ScriptedPrompter([password])
        let app = "com.example.app"
        func q(_ account: String, _ group: String?, _ extra: [String: Any] = [:]) -> [String: Any] {
            var out: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: app,
                                      kSecAttrAccount as String: account]
            if let group { out[kSecAttrAccessGroup as String] = group }
            return out.merging(extra) { $1 }
        }
        XCTAssertEqual(secrets(q("token", "TEAM.app1")), ["app1 token"], "read by its group: the sealed blob opens as it was")
        let db = try SQLiteDatabase(path: home + "/keygate/items.sqlite", create: false)
        XCTAssertEqual(try db.scalarText("PRAGMA user_version"), "3", "the first open moved the file")
        XCTAssertEqual(secrets(q("plain", nil)), ["plain token"])
        XCTAssertEqual(secrets(q("synced", "TEAM.app1", [kSecAttrSynchronizable as String: true])), ["synced token"])
        XCTAssertEqual(secrets([kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "example.com",
                                kSecAttrAccessGroup as String: "TEAM.shared"]), ["web password"])
        XCTAssertEqual(add(q("token", "TEAM.app2"), "app2 token"), errSecSuccess, "another group's twin fits")
        XCTAssertEqual(add(q("token", nil), "ungrouped token"), errSecSuccess, "and an ungrouped one")
        XCTAssertEqual(add(q("token", "TEAM.app1"), "again"), errSecDuplicateItem)
        XCTAssertEqual(secrets(q("token", nil)), ["app1 token", "app2 token", "ungrouped token"])
        XCTAssertEqual(SecItemDelete(q("token", nil) as CFDictionary), errSecSuccess)
        XCTAssertEqual(secrets(q("synced", nil, [kSecAttrSynchronizable as String: kSecAttrSynchronizableAny])), ["synced token"])
        withExtendedLifetime(pam) {}
    }
}
