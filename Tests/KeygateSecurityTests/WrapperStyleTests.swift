// Runs the wrappers in AppleStyle/ written in the shapes of the popular open-source
// libraries (FluentKeychain: KeychainAccess; StaticKeychain: SwiftKeychainWrapper with
// C-way CoreFoundation; @Keychain: a property wrapper; CodableKeychainStore) and the
// Security calls beyond SecItem's core (access groups, synchronizable, kSecReturnRef,
// errSecNoSuchAttr, errSecMissingEntitlement, errSecUnimplemented) against the real
// stack: gnome-keyring on the private session bus, real libpam (pam_matrix), the real
// kernel keyring. Only the person typing is scripted, as in KeygateSecurityTests.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

final class WrapperStyleTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var password: String { environment?.password ?? "" }
    private var service = ""
    private var person = ScriptedPrompter([])

    override func setUpWithError() throws {
        (environment, service, person) = try AppleStack.start(servicePrefix: "wrap-test")
        unsetenv("KEYGATE_ACCESS_GROUPS")
    }

    override func tearDownWithError() throws {
        unsetenv("KEYGATE_ACCESS_GROUPS")
        StaticKeychain.accessGroup = nil
        AppleStack.end(environment, deleting: [service, service + "-codable", "com.example.propertywrapper", StaticKeychain.serviceName])
    }

    private func answer(_ count: Int) {
        person = ScriptedPrompter(Array(repeating: password, count: count))
        KeygateSecurityConfiguration.prompter = person
    }

    private func generic(_ account: String? = nil, _ extra: [String: Any] = [:]) -> [String: Any] {
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
        if let account = account { q[kSecAttrAccount as String] = account }
        return q.merging(extra) { $1 }
    }

    private func add(_ account: String, _ secret: String, _ extra: [String: Any] = [:]) -> OSStatus {
        SecItemAdd(generic(account, extra.merging([kSecValueData as String: Data(secret.utf8)]) { $1 }) as CFDictionary, nil)
    }

    private func userPresence() throws -> SecAccessControl {
        var error: Unmanaged<CFError>?
        return try XCTUnwrap(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, &error))
    }

    // MARK: Fluent wrapper (KeychainAccess's shape)

    func test_fluent_subscript_setsGetsAndRemoves() {
        let keychain = FluentKeychain(service: service)
        XCTAssertNil(keychain["token"])
        keychain["token"] = "abc ✓"
        XCTAssertEqual(keychain["token"], "abc ✓")
        keychain[data: "blob"] = Data([0, 0xff, 7])
        XCTAssertEqual(keychain[data: "blob"], Data([0, 0xff, 7]))
        keychain["token"] = nil
        XCTAssertNil(keychain["token"])
        XCTAssertEqual(try keychain.allKeys(), ["blob"])
    }

    func test_fluent_setTwice_updatesInPlace_keepingOneItemAndItsCreationDate() throws {
        let keychain = FluentKeychain(service: service)
        try keychain.set("v1", key: "k")
        var first: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("k", [kSecReturnAttributes as String: true]) as CFDictionary, &first), errSecSuccess)
        try keychain.set("v2", key: "k")
        XCTAssertEqual(try keychain.get("k"), "v2")
        XCTAssertEqual(try keychain.allKeys(), ["k"])
        var second: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("k", [kSecReturnAttributes as String: true]) as CFDictionary, &second), errSecSuccess)
        XCTAssertEqual((first as? [String: Any])?[kSecAttrCreationDate as String] as? Date,
                       (second as? [String: Any])?[kSecAttrCreationDate as String] as? Date, "an update is not a delete and add")
    }

    func test_fluent_allItems_returnsAttributesAndRefs_inOneCall() throws {
        let keychain = FluentKeychain(service: service).label("Work")
        try keychain.set("1", key: "a")
        try keychain.set("2", key: "b")
        let items = try keychain.allItems()
        XCTAssertEqual(items.map { $0.key }, ["a", "b"])
        XCTAssertEqual(items.map { $0.label }, ["Work", "Work"])
        for item in items {
            XCTAssertEqual(CFGetTypeID(item.ref), SecKeychainItemGetTypeID())
        }
        XCTAssertNotEqual(items[0].ref, items[1].ref)
    }

    func test_fluent_attributeOnlyUpdate_changesLabelAndComment_withoutPrompt_andKeepsTheSecret() throws {
        let keychain = FluentKeychain(service: service)
        try keychain.set("secret", key: "k")
        KeychainOperations_lock()
        let prompts = person.prompts.count
        try keychain.update(key: "k", label: "Renamed", comment: "moved")
        XCTAssertEqual(person.prompts.count, prompts, "an attribute-only update never prompts, even locked")
        let item = try XCTUnwrap(try keychain.allItems().first)
        XCTAssertEqual(item.label, "Renamed")
        XCTAssertEqual(item.comment, "moved")
        person.enqueue(password)
        XCTAssertEqual(try keychain.get("k"), "secret")
    }

    func test_fluent_accessibility_isReturnedInTheAttributes() throws {
        try FluentKeychain(service: service).accessibility(kSecAttrAccessibleWhenUnlockedThisDeviceOnly).set("x", key: "device")
        try FluentKeychain(service: service).accessibility(kSecAttrAccessibleAfterFirstUnlock).set("y", key: "roaming")
        let items = try FluentKeychain(service: service).allItems()
        XCTAssertEqual(items.map { $0.accessible }, [kSecAttrAccessibleWhenUnlockedThisDeviceOnly, kSecAttrAccessibleAfterFirstUnlock])
    }

    func test_fluent_synchronizableItem_isHiddenFromTheDefaultQuery_andFoundWithAny() throws {
        try FluentKeychain(service: service).synchronizable(true).set("cloud", key: "k")
        XCTAssertNil(try FluentKeychain(service: service).get("k"), "no kSecAttrSynchronizable: only non-synchronizable items")
        XCTAssertEqual(try FluentKeychain(service: service).synchronizable(true).get("k"), "cloud")
        XCTAssertEqual(try FluentKeychain(service: service).synchronizableAny().get("k"), "cloud")
        XCTAssertEqual(try FluentKeychain(service: service).synchronizableAny().allItems().map { $0.synchronizable }, [true])
    }

    func test_fluent_synchronizableAny_listsAndRemovesBothKinds() throws {
        try FluentKeychain(service: service).synchronizable(true).set("1", key: "cloud")
        try FluentKeychain(service: service).set("2", key: "local")
        XCTAssertEqual(try FluentKeychain(service: service).allKeys(), ["local"])
        let both = try FluentKeychain(service: service).synchronizableAny().allItems()
        XCTAssertEqual(both.map { $0.key }, ["cloud", "local"])
        XCTAssertEqual(both.map { $0.synchronizable }, [true, false])
        try FluentKeychain(service: service).synchronizableAny().removeAll()
        XCTAssertEqual(try FluentKeychain(service: service).synchronizableAny().allKeys(), [])
    }

    func test_fluent_accessGroup_sameGroupReadsTheItem_anotherGroupDoesNot() throws {
        try FluentKeychain(service: service).accessGroup("TEAM.shared").set("shared", key: "k")
        XCTAssertEqual(try FluentKeychain(service: service).accessGroup("TEAM.shared").get("k"), "shared", "the other app passes the same group")
        XCTAssertNil(try FluentKeychain(service: service).accessGroup("TEAM.other").get("k"), "a different group does not see it")
        XCTAssertEqual(try FluentKeychain(service: service).accessGroup("TEAM.shared").allItems().first?.accessGroup, "TEAM.shared")
        XCTAssertEqual(try FluentKeychain(service: service).accessGroup("TEAM.other").allKeys(), [])
    }

    func test_fluent_invalidAccessPolicy_throwsTheCFErrorsDomainCodeAndDescription() {
        let keychain = FluentKeychain(service: service).accessibility(kSecAttrAccessibleWhenUnlocked,
                                                                      authenticationPolicy: [.userPresence, .devicePasscode])
        XCTAssertThrowsError(try keychain.set("x", key: "k")) { error in
            guard case .accessControl(let domain, let code, let description)? = error as? FluentKeychainError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(domain, NSOSStatusErrorDomain)
            XCTAssertEqual(code, Int(errSecParam))
            XCTAssertFalse(description.isEmpty)
            let ns = (error as? FluentKeychainError)?.nsError
            XCTAssertEqual(ns?.domain, kCFErrorDomainOSStatus as String)
        }
        XCTAssertNil(FluentKeychain(service: service)["k"], "nothing was stored")
    }

    func test_fluent_gatedItemWithUIFail_isInteractionNotAllowed_carriedAsAnNSError() throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        try FluentKeychain(service: service).accessibility(kSecAttrAccessibleWhenUnlocked, authenticationPolicy: .userPresence)
            .set("gated", key: "g")
        XCTAssertThrowsError(try FluentKeychain(service: service).authenticationUI(.fail).get("g")) { error in
            let ns = (error as? FluentKeychainError)?.nsError
            XCTAssertEqual(ns?.domain, NSOSStatusErrorDomain)
            XCTAssertEqual(ns?.code, Int(errSecInteractionNotAllowed))
            XCTAssertTrue(ns?.localizedDescription.contains("User interaction is not allowed.") ?? false, "\(String(describing: ns))")
        }
        XCTAssertEqual(try FluentKeychain(service: service).authenticationUI(.skip).allKeys(), ["g"], "listing never prompts")
    }

    func test_fluent_asyncLAContext_evaluatesOnce_andServesTwoGatedReads() async throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        answer(2)
        let gated = FluentKeychain(service: service).accessibility(kSecAttrAccessibleWhenUnlocked, authenticationPolicy: .userPresence)
        try gated.set("one", key: "a")
        try gated.set("two", key: "b")
        let context = LAContext()
        let ok = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "read both tokens")
        XCTAssertTrue(ok)
        let prompts = person.prompts.count
        let reader = FluentKeychain(service: service).authenticationContext(context).authenticationUI(.fail)
        XCTAssertEqual(try reader.get("a"), "one")
        XCTAssertEqual(try reader.get("b"), "two")
        XCTAssertEqual(person.prompts.count, prompts, "the evaluated context served both reads")
        XCTAssertTrue(person.prompts.last?.contains("read both tokens") ?? false, "\(person.prompts)")
    }

    func test_asyncLAContext_cancel_isUserCancel_andTheGatedReadStaysRefused() async throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        try FluentKeychain(service: service).accessibility(kSecAttrAccessibleWhenUnlocked, authenticationPolicy: .userPresence)
            .set("gated", key: "g")
        KeygateSecurityConfiguration.prompter = ScriptedPrompter([nil])
        let context = LAContext()
        do {
            _ = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "cancel me")
            XCTFail("a cancelled prompt must not succeed")
        } catch let error as LAError {
            XCTAssertEqual(error.code, .userCancel)
            XCTAssertEqual((error as NSError).domain, LAErrorDomain)
        }
        XCTAssertThrowsError(try FluentKeychain(service: service).authenticationContext(context).authenticationUI(.fail).get("g")) {
            XCTAssertEqual(($0 as? FluentKeychainError)?.status, errSecInteractionNotAllowed)
        }
    }

    func test_LAContext_evaluateAccessControl_forUseItem_servesTheRead_keyOperationsAreUnimplemented() async throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        answer(2)
        let access = try userPresence()
        XCTAssertEqual(add("g", "gated", [kSecAttrAccessControl as String: access]), errSecSuccess)
        let context = LAContext()
        XCTAssertNil(context.evaluatedPolicyDomainState)
        XCTAssertFalse(context.setCredential(Data("pw".utf8), type: .applicationPassword))
        let ok = try await context.evaluateAccessControl(access, operation: .useItem, localizedReason: "use the item")
        XCTAssertTrue(ok)
        let prompts = person.prompts.count
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("g", [kSecReturnData as String: true, kSecUseAuthenticationContext as String: context,
                                                         kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]) as CFDictionary, &result),
                       errSecSuccess)
        XCTAssertEqual(result as? Data, Data("gated".utf8))
        XCTAssertEqual(person.prompts.count, prompts)
        do {
            _ = try await context.evaluateAccessControl(access, operation: .useKeySign, localizedReason: "sign")
            XCTFail("key operations are not implemented")
        } catch {
            XCTAssertEqual((error as NSError).code, Int(errSecUnimplemented))
        }
    }

    // MARK: Static wrapper, queries built the C way

    func test_static_cWayQueries_setReadAndOverwrite() {
        StaticKeychain.serviceName = service
        XCTAssertTrue(StaticKeychain.set("first", forKey: "user"))
        XCTAssertTrue(StaticKeychain.set("second", forKey: "user"), "duplicate then SecItemUpdate, status \(StaticKeychain.lastStatus)")
        XCTAssertEqual(StaticKeychain.string(forKey: "user"), "second")
        XCTAssertTrue(StaticKeychain.hasValue(forKey: "user"))
        XCTAssertTrue(StaticKeychain.set(Data([1, 2, 3, 0]), forKey: "bytes"))
        XCTAssertEqual(StaticKeychain.data(forKey: "bytes"), Data([1, 2, 3, 0]))
    }

    func test_static_allKeys_walksTheResultWithCFArrayAndCFDictionary() {
        StaticKeychain.serviceName = service
        for key in ["c", "a", "b"] { StaticKeychain.set(key.uppercased(), forKey: key) }
        XCTAssertEqual(StaticKeychain.allKeys(), ["a", "b", "c"])
        StaticKeychain.removeObject(forKey: "b")
        XCTAssertEqual(StaticKeychain.allKeys(), ["a", "c"])
    }

    func test_static_integer_roundTripsThroughCFNumber_andRefusesWhatDoesNotFit() {
        StaticKeychain.serviceName = service
        StaticKeychain.set(1_234, forKey: "small")
        StaticKeychain.set(5_000_000_000, forKey: "large")
        XCTAssertEqual(StaticKeychain.integer(forKey: "small"), 1_234)
        XCTAssertNil(StaticKeychain.integer(forKey: "large"), "CFNumberGetValue reports the loss")
        XCTAssertEqual(StaticKeychain.string(forKey: "large"), "5000000000")
    }

    func test_static_deleteThroughTheRef_removesOnlyThatItem() {
        StaticKeychain.serviceName = service
        StaticKeychain.set("1", forKey: "keep")
        StaticKeychain.set("2", forKey: "drop")
        let refs = StaticKeychain.allRefs()
        XCTAssertEqual(refs.count, 2)
        let drop = refs.first { $0.description.hasSuffix("/drop>") }
        XCTAssertTrue(StaticKeychain.delete(ref: try! XCTUnwrap(drop)))
        XCTAssertEqual(StaticKeychain.allKeys(), ["keep"])
        XCTAssertFalse(StaticKeychain.delete(ref: try! XCTUnwrap(drop)))
        XCTAssertEqual(StaticKeychain.lastStatus, errSecItemNotFound)
    }

    func test_static_missingItem_isNil_withNotFound_andRemoveAllIsQuiet() {
        StaticKeychain.serviceName = service
        XCTAssertNil(StaticKeychain.string(forKey: "nobody"))
        XCTAssertEqual(StaticKeychain.lastStatus, errSecItemNotFound)
        XCTAssertFalse(StaticKeychain.hasValue(forKey: "nobody"))
        XCTAssertTrue(StaticKeychain.removeAllKeys())
        StaticKeychain.set("x", forKey: "y")
        XCTAssertTrue(StaticKeychain.removeAllKeys())
        XCTAssertEqual(StaticKeychain.allKeys(), [])
    }

    // MARK: Property wrapper

    private struct Session {
        @Keychain(key: "token") var token: String?
        @Keychain(key: "refresh") var refresh: String?
    }

    func test_propertyWrapper_storesReadsAndClears() {
        let session = Session()
        session.token = nil
        XCTAssertNil(session.token)
        XCTAssertFalse(session.$token.exists)
        session.token = "t1"
        XCTAssertEqual(session.token, "t1")
        session.token = "t2"
        XCTAssertEqual(session.token, "t2")
        XCTAssertTrue(session.$token.exists)
        session.token = nil
        XCTAssertNil(session.token)
        XCTAssertFalse(session.$token.exists)
    }

    func test_propertyWrapper_twoDeclarationsOfOneKeyShareTheItem_otherKeysDoNot() {
        let a = Session(), b = Session()
        a.token = "shared"
        b.refresh = "r"
        XCTAssertEqual(b.token, "shared")
        XCTAssertEqual(a.refresh, "r")
        a.token = nil
        XCTAssertNil(b.token)
        XCTAssertEqual(b.refresh, "r")
        b.refresh = nil
    }

    func test_propertyWrapper_withAnAccessGroup_isInvisibleToAnotherGroup() {
        let mine = Keychain(key: "grouped", accessGroup: "TEAM.app1")
        let same = Keychain(key: "grouped", accessGroup: "TEAM.app1")
        let other = Keychain(key: "grouped", accessGroup: "TEAM.app2")
        mine.wrappedValue = "in group 1"
        XCTAssertEqual(same.wrappedValue, "in group 1")
        XCTAssertNil(other.wrappedValue)
        other.wrappedValue = "in group 2"
        XCTAssertEqual(mine.wrappedValue, "in group 1", "group 2's write did not reach group 1's item")
        XCTAssertEqual(other.wrappedValue, "in group 2", "the group is part of the primary key, as on Apple: group 2 has its own item")
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "com.example.propertywrapper",
                                  kSecAttrAccount as String: "grouped", kSecAttrAccessGroup as String: "TEAM.app2",
                                  kSecValueData as String: Data("x".utf8)]
        XCTAssertEqual(SecItemAdd(add as CFDictionary, nil), errSecDuplicateItem)
        mine.wrappedValue = nil
        other.wrappedValue = nil
    }

    // MARK: Codable store

    private struct Credential: Codable, Equatable {
        var user: String
        var scopes: [String]
        var expires: Date
    }

    private struct Settings: Codable, Equatable { var theme: String }

    func test_codable_savesLoadsAndOverwrites() throws {
        let store = CodableKeychainStore<Credential>(service: service + "-codable")
        let first = Credential(user: "ann", scopes: ["read"], expires: Date(timeIntervalSince1970: 1_900_000_000))
        try store.save(first, id: "ann")
        XCTAssertEqual(try store.load(id: "ann"), first)
        var second = first
        second.scopes.append("write")
        try store.save(second, id: "ann")
        XCTAssertEqual(try store.load(id: "ann"), second)
        XCTAssertEqual(try store.all().count, 1)
    }

    func test_codable_all_listsOnlyItsOwnType_withLabels() throws {
        let credentials = CodableKeychainStore<Credential>(service: service + "-codable")
        let settings = CodableKeychainStore<Settings>(service: service + "-codable")
        try credentials.save(Credential(user: "b", scopes: [], expires: Date(timeIntervalSince1970: 0)), id: "b", label: "Bea")
        try credentials.save(Credential(user: "a", scopes: ["x"], expires: Date(timeIntervalSince1970: 0)), id: "a", label: "Al")
        try settings.save(Settings(theme: "dark"), id: "ui")
        let all = try credentials.all()
        XCTAssertEqual(all.map { $0.id }, ["a", "b"])
        XCTAssertEqual(all.map { $0.label }, ["Al", "Bea"])
        XCTAssertEqual(all.map { $0.value.user }, ["a", "b"])
        XCTAssertEqual(try settings.all().map { $0.value }, [Settings(theme: "dark")])
    }

    func test_codable_rename_isAttributeOnly_andNeverPrompts() throws {
        let store = CodableKeychainStore<Settings>(service: service + "-codable")
        try store.save(Settings(theme: "light"), id: "ui", label: "Old")
        KeychainOperations_lock()
        let prompts = person.prompts.count
        try store.rename(id: "ui", label: "New")
        XCTAssertEqual(person.prompts.count, prompts)
        person.enqueue(password)
        XCTAssertEqual(try store.all().first?.label, "New")
        XCTAssertEqual(try store.load(id: "ui"), Settings(theme: "light"))
    }

    func test_codable_missingRecord_isNil_andRemovingIt_isNotFound_asACFErrorBuiltNSError() throws {
        let store = CodableKeychainStore<Settings>(service: service + "-codable")
        XCTAssertNil(try store.load(id: "none"))
        XCTAssertThrowsError(try store.remove(id: "none")) { error in
            XCTAssertEqual(error as? CodableStoreError, .keychain(errSecItemNotFound))
            let ns = (error as? CodableStoreError)?.nsError
            XCTAssertEqual(ns?.domain, NSOSStatusErrorDomain)
            XCTAssertEqual(ns?.code, Int(errSecItemNotFound))
            XCTAssertEqual(ns.map { CFErrorGetCode($0) }, CFIndex(errSecItemNotFound))
        }
    }

    func test_codable_loadAuthenticated_async_promptsOnceWithTheReason() async throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        answer(2)
        let store = CodableKeychainStore<Settings>(service: service + "-codable")
        try store.save(Settings(theme: "gated"), id: "g", accessControl: try userPresence())
        let before = person.prompts.count
        let loaded = try await store.loadAuthenticated(id: "g", reason: "open your settings")
        XCTAssertEqual(loaded, Settings(theme: "gated"))
        XCTAssertEqual(person.prompts.count, before + 1)
        XCTAssertTrue(person.prompts.last?.contains("open your settings") ?? false, "\(person.prompts)")
        XCTAssertThrowsError(try store.load(id: "g", context: LAContext()), "a fresh context with UI Fail is refused") {
            XCTAssertEqual($0 as? CodableStoreError, .keychain(errSecInteractionNotAllowed))
        }
    }

    // MARK: Access groups (KEYGATE_ACCESS_GROUPS, the Linux entitlement list)

    func test_accessGroups_declared_addWithoutAGroup_goesIntoTheFirstGroup() {
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.main, TEAM.shared", 1)
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("a", [kSecReturnAttributes as String: true]) as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual((result as? [String: Any])?[kSecAttrAccessGroup as String] as? String, "TEAM.main")
        XCTAssertEqual(SecItemCopyMatching(generic("a", [kSecAttrAccessGroup as String: "TEAM.shared"]) as CFDictionary, nil), errSecItemNotFound)
    }

    func test_accessGroups_anUndeclaredGroup_isMissingEntitlement_forEveryCall() {
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.main", 1)
        let foreign: [String: Any] = [kSecAttrAccessGroup as String: "TEAM.foreign"]
        XCTAssertEqual(add("a", "1", foreign), errSecMissingEntitlement)
        XCTAssertEqual(SecItemCopyMatching(generic("a", foreign) as CFDictionary, nil), errSecMissingEntitlement)
        XCTAssertEqual(SecItemDelete(generic("a", foreign) as CFDictionary), errSecMissingEntitlement)
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        XCTAssertEqual(SecItemUpdate(generic("a") as CFDictionary, foreign as CFDictionary), errSecMissingEntitlement,
                       "moving an item into an undeclared group is refused too")
        let message = SecCopyErrorMessageString(errSecMissingEntitlement, nil) ?? ""
        XCTAssertTrue(message.contains("A required entitlement isn't present."), message)
        XCTAssertTrue(message.contains("KEYGATE_ACCESS_GROUPS"), message)
    }

    func test_accessGroups_aQueryWithoutAGroup_seesDeclaredAndUngroupedItems_notAnotherApps() {
        XCTAssertEqual(add("ungrouped", "0"), errSecSuccess)
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.app1", 1)
        XCTAssertEqual(add("app1", "1"), errSecSuccess)
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.app2", 1)
        XCTAssertEqual(add("app2", "2"), errSecSuccess)
        func accounts() -> [String] {
            var result: AnyObject?
            guard SecItemCopyMatching(generic(nil, [kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary,
                                      &result) == errSecSuccess else { return [] }
            return ((result as? [[String: Any]]) ?? []).compactMap { $0[kSecAttrAccount as String] as? String }.sorted()
        }
        XCTAssertEqual(accounts(), ["app2", "ungrouped"])
        XCTAssertEqual(SecItemDelete(generic("app1") as CFDictionary), errSecItemNotFound, "app2 cannot delete app1's item")
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.app1", 1)
        XCTAssertEqual(accounts(), ["app1", "ungrouped"])
        setenv("KEYGATE_ACCESS_GROUPS", "TEAM.app1:TEAM.app2", 1)
        XCTAssertEqual(accounts(), ["app1", "app2", "ungrouped"])
        unsetenv("KEYGATE_ACCESS_GROUPS")
        XCTAssertEqual(accounts(), ["app1", "app2", "ungrouped"], "a program that declares no groups sees every item")
    }

    // MARK: Apple's statuses for bad queries

    func test_noSuchAttr_forAnotherClassesAttribute_onAddSearchAndUpdate() {
        XCTAssertEqual(add("a", "1", [kSecAttrServer as String: "example.com"]), errSecNoSuchAttr)
        XCTAssertEqual(add("a", "1", [kSecAttrPort as String: 443]), errSecNoSuchAttr)
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(generic("a", [kSecAttrProtocol as String: kSecAttrProtocolHTTPS]) as CFDictionary, nil), errSecNoSuchAttr)
        XCTAssertEqual(SecItemUpdate(generic("a") as CFDictionary, [kSecAttrPath as String: "/x"] as CFDictionary), errSecNoSuchAttr)
        let internet: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "\(service).example",
                                       kSecAttrService as String: "svc", kSecValueData as String: Data("p".utf8)]
        XCTAssertEqual(SecItemAdd(internet as CFDictionary, nil), errSecNoSuchAttr, "kSecAttrService is not an internet-password attribute")
        XCTAssertEqual(SecItemCopyMatching(generic("a") as CFDictionary, nil), errSecSuccess, "the refused calls changed nothing")
    }

    func test_unknownKey_isNoSuchAttr_wrongType_isParam_andUnimplementedKeys_areUnimplemented() {
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(generic("a", ["zzzz": "?"]) as CFDictionary, nil), errSecNoSuchAttr)
        XCTAssertEqual(SecItemCopyMatching(generic("a", [kSecAttrLabel as String: 5]) as CFDictionary, nil), errSecParam)
        for key in [kSecMatchCaseInsensitive, kSecAttrCreator, kSecAttrType, kSecAttrIsNegative, kSecMatchPolicy,
                    kSecMatchTrustedOnly, kSecUseKeychain, kSecAttrTokenID, kSecAttrApplicationTag, kSecAttrPersistentReference] {
            XCTAssertEqual(SecItemCopyMatching(generic("a", [key as String: kCFBooleanTrue as Any]) as CFDictionary, nil), errSecUnimplemented, key)
        }
        XCTAssertEqual(SecItemAdd([kSecClass as String: kSecClassKey, kSecAttrLabel as String: "k"] as CFDictionary, nil), errSecUnimplemented)
    }

    // MARK: kSecReturnRef and refs

    func test_returnRef_givesApplesShapes_alone_inAnArray_andUnderValueRef() throws {
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        XCTAssertEqual(add("b", "2"), errSecSuccess)
        var one: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("a", [kSecReturnRef as String: true]) as CFDictionary, &one), errSecSuccess)
        XCTAssertTrue(one is SecKeychainItem, "\(String(describing: one))")
        var all: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic(nil, [kSecReturnRef as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary, &all),
                       errSecSuccess)
        XCTAssertEqual((all as? [SecKeychainItem])?.count, 2)
        var full: AnyObject?
        let everything: [String: Any] = [kSecReturnRef as String: true, kSecReturnAttributes as String: true, kSecReturnData as String: true,
                                         kSecMatchLimit as String: kSecMatchLimitAll]
        XCTAssertEqual(SecItemCopyMatching(generic(nil, everything) as CFDictionary, &full), errSecSuccess)
        let items = try XCTUnwrap(full as? [[String: Any]])
        XCTAssertEqual(items.count, 2)
        for item in items {
            XCTAssertTrue(item[kSecValueRef as String] is SecKeychainItem)
            XCTAssertNotNil(item[kSecValueData as String] as? Data)
            XCTAssertNotNil(item[kSecAttrAccount as String] as? String)
        }
        XCTAssertEqual(Set(items.compactMap { $0[kSecValueData as String] as? Data }), [Data("1".utf8), Data("2".utf8)])
    }

    func test_valueRef_andMatchItemList_findTheItem_andAnUpdateThroughTheRefTouchesOnlyIt() throws {
        XCTAssertEqual(add("a", "1"), errSecSuccess)
        XCTAssertEqual(add("b", "2"), errSecSuccess)
        var refResult: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic("b", [kSecReturnRef as String: true]) as CFDictionary, &refResult), errSecSuccess)
        let ref = try XCTUnwrap(refResult as? SecKeychainItem)
        var data: AnyObject?
        XCTAssertEqual(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref,
                                            kSecReturnData as String: true] as CFDictionary, &data), errSecSuccess)
        XCTAssertEqual(data as? Data, Data("2".utf8))
        XCTAssertEqual(SecItemCopyMatching([kSecClass as String: kSecClassGenericPassword, kSecMatchItemList as String: [ref],
                                            kSecReturnData as String: true] as CFDictionary, &data), errSecSuccess)
        XCTAssertEqual(data as? Data, Data("2".utf8))
        XCTAssertEqual(SecItemUpdate([kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref] as CFDictionary,
                                     [kSecAttrLabel as String: "only b"] as CFDictionary), errSecSuccess)
        var labels: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(generic(nil, [kSecReturnAttributes as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) as CFDictionary,
                                           &labels), errSecSuccess)
        let byAccount = Dictionary(uniqueKeysWithValues: ((labels as? [[String: Any]]) ?? []).compactMap { item -> (String, String)? in
            guard let a = item[kSecAttrAccount as String] as? String else { return nil }
            return (a, item[kSecAttrLabel as String] as? String ?? "")
        })
        XCTAssertEqual(byAccount["b"], "only b")
        XCTAssertNotEqual(byAccount["a"], "only b")
        XCTAssertEqual(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref] as CFDictionary, nil), errSecParam)
        let byRef: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecValueRef as String: ref]
        XCTAssertEqual(SecItemCopyMatching(byRef as CFDictionary, nil), errSecSuccess, "the ref survives an attribute-only update")
        XCTAssertEqual(SecItemUpdate(byRef as CFDictionary, [kSecAttrAccount as String: "b2"] as CFDictionary), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(byRef as CFDictionary, nil), errSecItemNotFound, "the ref names the old primary key")
    }

    func test_CFMutableDictionaryQuery_goesThroughAllFourSecItemFunctions() {
        var keyCallBacks = kCFTypeDictionaryKeyCallBacks, valueCallBacks = kCFTypeDictionaryValueCallBacks
        let query: CFMutableDictionary = CFDictionaryCreateMutable(nil, 0, &keyCallBacks, &valueCallBacks)
        CFDictionarySetValue(query, kSecClass, kSecClassGenericPassword)
        CFDictionarySetValue(query, kSecAttrService, service)
        CFDictionarySetValue(query, kSecAttrAccount, "c-way")
        let addition: CFMutableDictionary = CFDictionaryCreateMutable(nil, 0, &keyCallBacks, &valueCallBacks)
        for key in [kSecClass, kSecAttrService, kSecAttrAccount] {
            let value = CFDictionaryGetValue(query, key).map { Unmanaged<AnyObject>.fromOpaque($0).takeUnretainedValue() }
            CFDictionarySetValue(addition, key, value)
        }
        CFDictionarySetValue(addition, kSecValueData, Data("v".utf8))
        XCTAssertEqual(SecItemAdd(addition, nil), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(query, nil), errSecSuccess)
        let changes: CFMutableDictionary = CFDictionaryCreateMutable(nil, 0, &keyCallBacks, &valueCallBacks)
        CFDictionarySetValue(changes, kSecValueData, Data("w".utf8))
        XCTAssertEqual(SecItemUpdate(query, changes), errSecSuccess)
        CFDictionarySetValue(query, kSecReturnData, kCFBooleanTrue)
        var result: CFTypeRef?
        XCTAssertEqual(SecItemCopyMatching(query, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("w".utf8))
        CFDictionaryRemoveValue(query, kSecReturnData)
        XCTAssertFalse(CFDictionaryContainsKey(query, kSecReturnData))
        XCTAssertEqual(SecItemDelete(query), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(query, nil), errSecItemNotFound)
    }

    // MARK: macOS's legacy generic-password calls

    func test_legacySecKeychainGenericPassword_addFindModifyFreeAndDelete() throws {
        let serviceName = service, account = "legacy"
        let secret = Array("hunter2".utf8)
        var added: SecKeychainItem?
        XCTAssertEqual(SecKeychainAddGenericPassword(nil, UInt32(serviceName.utf8.count), serviceName, UInt32(account.utf8.count), account,
                                                     UInt32(secret.count), secret, &added), errSecSuccess)
        XCTAssertNotNil(added)
        XCTAssertEqual(SecKeychainAddGenericPassword(nil, UInt32(serviceName.utf8.count), serviceName, UInt32(account.utf8.count), account,
                                                     UInt32(secret.count), secret, nil), errSecDuplicateItem)
        var length: UInt32 = 0
        var data: UnsafeMutableRawPointer?
        var found: SecKeychainItem?
        XCTAssertEqual(SecKeychainFindGenericPassword(nil, UInt32(serviceName.utf8.count), serviceName, UInt32(account.utf8.count), account,
                                                      &length, &data, &found), errSecSuccess)
        XCTAssertEqual(length, 7)
        XCTAssertEqual(data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) }, secret)
        XCTAssertEqual(SecKeychainItemFreeContent(nil, data), errSecSuccess)
        let item = try XCTUnwrap(found)
        XCTAssertEqual(item, added)
        let replacement = Array("correct horse".utf8)
        XCTAssertEqual(SecKeychainItemModifyAttributesAndData(item, nil, UInt32(replacement.count), replacement), errSecSuccess)
        XCTAssertEqual(storedSecret(account), Data(replacement))
        XCTAssertEqual(SecKeychainItemDelete(item), errSecSuccess)
        XCTAssertEqual(SecKeychainFindGenericPassword(nil, UInt32(serviceName.utf8.count), serviceName, UInt32(account.utf8.count), account,
                                                      nil, nil, nil), errSecItemNotFound)
        var keychain: SecKeychain?
        XCTAssertEqual(SecKeychainCopyDefault(&keychain), errSecUnimplemented, "keychain files are not Keygate's")
    }

    private func storedSecret(_ account: String) -> Data? {
        var result: AnyObject?
        guard SecItemCopyMatching(generic(account, [kSecReturnData as String: true]) as CFDictionary, &result) == errSecSuccess else { return nil }
        return result as? Data
    }

    private func KeychainOperations_lock() {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
    }
}
