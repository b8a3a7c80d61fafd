// Runs the Apple-style sources in AppleStyle/ against the real stack: gnome-keyring on the
// private session bus (scripts/secret-session), real libpam (pam_matrix through
// pam_start_confdir), the real kernel keyring. Only the person typing is scripted, through
// KeygateSecurity's internal prompter seam.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

final class KeygateSecurityTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var password: String { environment?.password ?? "" }
    private var service = ""
    private var person = ScriptedPrompter([])

    override func setUpWithError() throws {
        (environment, service, person) = try AppleStack.start(servicePrefix: "sec-test")
    }

    override func tearDownWithError() throws {
        AppleStack.end(environment, deleting: [service, service + "-other", "com.example.session", "com.example.biometric"])
    }

    private func wrapper() -> KeychainWrapper {
        let w = KeychainWrapper.shared
        w.service = service
        return w
    }

    // MARK: The wrapper class (shared instance, upsert, exists, deleteAll)

    func test_wrapper_upsertsThroughDuplicateAndUpdate_andReadsUTF8AndBinary() {
        let w = wrapper()
        XCTAssertTrue(w.set("first ✓", forKey: "token"))
        XCTAssertTrue(w.set("second ✓", forKey: "token"), "a second set must update, status \(w.lastStatus)")
        XCTAssertEqual(w.string(forKey: "token"), "second ✓")
        let binary = Data([0, 1, 2, 0xfe, 0xff, 0])
        XCTAssertTrue(w.set(binary, forKey: "blob"))
        XCTAssertEqual(w.data(forKey: "blob"), binary)
        XCTAssertEqual(w.allKeys(), ["blob", "token"])
    }

    func test_wrapper_exists_delete_andDeleteAllByServiceOnly() {
        let w = wrapper()
        XCTAssertFalse(w.exists("a"))
        XCTAssertEqual(w.lastStatus, errSecItemNotFound)
        w.set("1", forKey: "a")
        w.set("2", forKey: "b")
        XCTAssertTrue(w.exists("a"))
        XCTAssertTrue(w.delete("a"))
        XCTAssertFalse(w.exists("a"))
        XCTAssertNil(w.string(forKey: "a"))
        XCTAssertEqual(w.lastStatus, errSecItemNotFound)
        let other = KeychainWrapper()
        other.service = service + "-other"
        other.set("3", forKey: "b")
        XCTAssertTrue(w.deleteAll())
        XCTAssertEqual(w.allKeys(), [])
        XCTAssertEqual(other.string(forKey: "b"), "3", "deleteAll by service leaves other services alone")
    }

    // MARK: The static helper (CFString keys, CFTypeRef, as! Data, delete-then-add, Codable)

    func test_helper_deleteThenAdd_cfStringQueries_andCodable() throws {
        try KeychainHelper.save(Data("v1".utf8), service: service, account: "acct")
        try KeychainHelper.save(Data("v2".utf8), service: service, account: "acct")
        XCTAssertEqual(try KeychainHelper.read(service: service, account: "acct"), Data("v2".utf8))
        XCTAssertThrowsError(try KeychainHelper.read(service: service, account: "nobody")) {
            XCTAssertEqual($0 as? KeychainHelperError, .notFound)
        }
        let both = try XCTUnwrap(KeychainHelper.attributes(service: service, account: "acct"))
        XCTAssertEqual(both[kSecValueData] as? Data, Data("v2".utf8), "data and attributes together give one dictionary")
        XCTAssertEqual(both[kSecAttrAccount] as? String, "acct")
        XCTAssertEqual(both[kSecAttrService] as? String, service)
        XCTAssertNotNil(both[kSecAttrCreationDate] as? Date)
        struct Prefs: Codable, Equatable { var theme: String; var pins: [Int] }
        try KeychainHelper.save(Prefs(theme: "dark", pins: [1, 2]), service: service, account: "prefs")
        XCTAssertEqual(KeychainHelper.read(service: service, account: "prefs", type: Prefs.self), Prefs(theme: "dark", pins: [1, 2]))
        KeychainHelper.delete(service: service, account: "prefs")
        XCTAssertNil(KeychainHelper.read(service: service, account: "prefs", type: Prefs.self))
    }

    // MARK: The session store (update-then-add, JSON session objects)

    func test_sessionStore_savesUpdatesAndLoadsJSONSessions() throws {
        let store = SessionStore.shared
        store.clear()
        XCTAssertNil(store.load())
        let first = Session(userID: "u1", accessToken: "a1", refreshToken: "r1", expiresAt: Date(timeIntervalSince1970: 1_700_000_000))
        XCTAssertTrue(store.save(first), store.lastError ?? "")
        XCTAssertEqual(store.load(), first)
        let second = Session(userID: "u1", accessToken: "a2", refreshToken: "r2", expiresAt: Date(timeIntervalSince1970: 1_800_000_000))
        XCTAssertTrue(store.save(second))
        XCTAssertEqual(store.load(), second)
        let attrs = try XCTUnwrap(KeychainOperations(prompter: person).attributes(matching: ItemQuery(service: store.service)).first)
        XCTAssertEqual(attrs.label, "Example session")
        XCTAssertEqual(attrs.comment, "refreshed by the app")
        store.clear()
    }

    // MARK: Biometric store: .biometryCurrentSet, LAContext on a background queue

    func test_biometricStore_readsOnBackgroundQueue_withOneLAContext_andOneFinger() throws {
        // The iOS guide's .biometryCurrentSet store, with a real fprintd and a virtual finger
        // (scripts/fprint-session): the gatekeeper runs pam_fprintd; the password only opens the keychain.
        let fprint = try FprintSession()
        defer { fprint.stop() }
        let me = try UserAccount.current().name
        try fprint.enroll(me, as: "finger-a")
        for (name, value) in fprint.gatekeeperEnvironment { setenv(name, value, 1) }
        defer { for name in fprint.gatekeeperEnvironment.keys { unsetenv(name) } }
        let stack = "auth required pam_fprintd.so max-tries=1 timeout=10\naccount required pam_permit.so\n"
        try stack.write(toFile: (environment?.pamConfdir ?? "/nonexistent") + "/keygate-biometry", atomically: true, encoding: .utf8)
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)   // only the LAContext may carry the authentication
        person = ScriptedPrompter([password, password, password])
        KeygateSecurityConfiguration.prompter = person
        let store = BiometricSessionStore.shared
        try store.store(token: Data("bio-token".utf8), account: "alice")
        try store.store(token: Data([9, 8, 7]), account: "bob")
        let afterAdds = person.prompts.count
        XCTAssertTrue(store.hasToken(account: "alice"), "exists needs no authentication")
        XCTAssertEqual(person.prompts.count, afterAdds)
        let context = LAContext()
        func read(_ account: String) throws -> Data {
            let done = expectation(description: account)
            var outcome: Result<Data, BiometricError>?
            store.readToken(account: account, context: context, reason: "unlock your session") {
                outcome = $0
                done.fulfill()
            }
            wait(for: [done], timeout: 30)
            return try XCTUnwrap(outcome).get()
        }
        fprint.touch("finger-a")
        XCTAssertEqual(try read("alice"), Data("bio-token".utf8))
        XCTAssertEqual(try read("bob"), Data([9, 8, 7]), "the context's one finger serves the second read")
        XCTAssertEqual(person.prompts.count, afterAdds, "no password is asked for a finger-only item: \(person.prompts)")
        XCTAssertTrue(person.notices.contains { $0.contains("unlock your session") && $0.contains("finger") },
                      "the reason goes with fprintd's words: \(person.notices)")
    }

    // MARK: Apple's rules

    func test_addTwice_isDuplicate_missing_isNotFound_updateOfMissing_isNotFound() {
        let q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: "x", kSecValueData as String: Data("1".utf8)]
        XCTAssertEqual(SecItemAdd(q as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(SecItemAdd(q as CFDictionary, nil), errSecDuplicateItem)
        let missing: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                      kSecAttrAccount as String: "nobody"]
        XCTAssertEqual(SecItemCopyMatching(missing as CFDictionary, nil), errSecItemNotFound)
        XCTAssertEqual(SecItemDelete(missing as CFDictionary), errSecItemNotFound)
        XCTAssertEqual(SecItemUpdate(missing as CFDictionary, [kSecAttrLabel as String: "l"] as CFDictionary), errSecItemNotFound)
        XCTAssertEqual(SecItemCopyMatching([kSecAttrService as String: service] as CFDictionary, nil), errSecParam, "kSecClass is required")
    }

    func test_update_acceptsAttributesOnly_andChangesLabelWithoutPrompting_orMovesThePrimaryKey() {
        let base: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                   kSecAttrAccount as String: "a"]
        XCTAssertEqual(SecItemAdd(base.merging([kSecValueData as String: Data("s".utf8)]) { $1 } as CFDictionary, nil), errSecSuccess)
        XCTAssertEqual(SecItemUpdate(base as CFDictionary, [kSecReturnData as String: true] as CFDictionary), errSecParam)
        XCTAssertEqual(SecItemUpdate(base as CFDictionary, [kSecClass as String: kSecClassInternetPassword] as CFDictionary), errSecParam)
        let prompts = person.prompts.count
        let changes: [String: Any] = [kSecAttrLabel as String: "L", kSecAttrDescription as String: "D",
                                      kSecAttrGeneric as String: Data([1, 2])]
        XCTAssertEqual(SecItemUpdate(base as CFDictionary, changes as CFDictionary), errSecSuccess)
        XCTAssertEqual(person.prompts.count, prompts, "an attribute-only update never prompts")
        var result: AnyObject?
        let read = base.merging([kSecReturnAttributes as String: true, kSecReturnData as String: true]) { $1 }
        XCTAssertEqual(SecItemCopyMatching(read as CFDictionary, &result), errSecSuccess)
        let dict = result as? [String: Any]
        XCTAssertEqual(dict?[kSecAttrLabel as String] as? String, "L")
        XCTAssertEqual(dict?[kSecAttrDescription as String] as? String, "D")
        XCTAssertEqual(dict?[kSecAttrGeneric as String] as? Data, Data([1, 2]))
        XCTAssertEqual(dict?[kSecValueData as String] as? Data, Data("s".utf8))
        // Moving the primary key re-seals; the old account is gone, the secret kept.
        XCTAssertEqual(SecItemUpdate(base as CFDictionary, [kSecAttrAccount as String: "b"] as CFDictionary), errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(base as CFDictionary, nil), errSecItemNotFound)
        var moved: AnyObject?
        let b = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: "b",
                 kSecReturnData as String: true] as [String: Any]
        XCTAssertEqual(SecItemCopyMatching(b as CFDictionary, &moved), errSecSuccess)
        XCTAssertEqual(moved as? Data, Data("s".utf8))
    }

    func test_matchLimitAll_returnsArrays_andPersistentRefFindsTheItem() {
        for account in ["a", "b", "c"] {
            let q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrAccount as String: account, kSecValueData as String: Data(account.utf8)]
            XCTAssertEqual(SecItemAdd(q as CFDictionary, nil), errSecSuccess)
        }
        var result: AnyObject?
        let all: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                  kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll]
        XCTAssertEqual(SecItemCopyMatching(all as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual((result as? [Data])?.count, 3)
        var refResult: AnyObject?
        let refQuery: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                       kSecAttrAccount as String: "b", kSecReturnPersistentRef as String: true]
        XCTAssertEqual(SecItemCopyMatching(refQuery as CFDictionary, &refResult), errSecSuccess)
        let ref = try? XCTUnwrap(refResult as? Data)
        var byRef: AnyObject?
        let viaRef: [String: Any] = [kSecValuePersistentRef as String: ref as Any, kSecReturnData as String: true]
        XCTAssertEqual(SecItemCopyMatching(viaRef as CFDictionary, &byRef), errSecSuccess)
        XCTAssertEqual(byRef as? Data, Data("b".utf8))
        XCTAssertEqual(SecItemDelete([kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service] as CFDictionary),
                       errSecSuccess)
        XCTAssertEqual(SecItemCopyMatching(all as CFDictionary, &result), errSecItemNotFound, "delete removed every match")
    }

    func test_synchronizable_isMatchedAsOnApple_andAccessGroupIsStoredAndMatched() {
        let sync: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                   kSecAttrAccount as String: "s", kSecAttrSynchronizable as String: kCFBooleanTrue as Any,
                                   kSecAttrAccessGroup as String: "TEAM.group", kSecValueData as String: Data("x".utf8)]
        XCTAssertEqual(SecItemAdd(sync as CFDictionary, nil), errSecSuccess)
        let plain: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrAccount as String: "s"]
        XCTAssertEqual(SecItemCopyMatching(plain as CFDictionary, nil), errSecItemNotFound, "no kSecAttrSynchronizable: only non-sync items")
        var any = plain
        any[kSecAttrSynchronizable as String] = kSecAttrSynchronizableAny
        XCTAssertEqual(SecItemCopyMatching(any as CFDictionary, nil), errSecSuccess)
        any[kSecAttrAccessGroup as String] = "OTHER.group"
        XCTAssertEqual(SecItemCopyMatching(any as CFDictionary, nil), errSecItemNotFound)
        any[kSecAttrAccessGroup as String] = "TEAM.group"
        any[kSecReturnAttributes as String] = true
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(any as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual((result as? [String: Any])?[kSecAttrAccessGroup as String] as? String, "TEAM.group")
        XCTAssertEqual(((result as? [String: Any])?[kSecAttrSynchronizable as String] as? NSNumber)?.boolValue, true)
    }

    func test_internetPassword_attributesRoundTrip() {
        let q: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "\(service).example.com",
                                kSecAttrAccount as String: "me", kSecAttrProtocol as String: kSecAttrProtocolHTTPS,
                                kSecAttrPort as String: 8443, kSecAttrPath as String: "/login",
                                kSecAttrAuthenticationType as String: kSecAttrAuthenticationTypeHTMLForm,
                                kSecValueData as String: Data("pw".utf8)]
        XCTAssertEqual(SecItemAdd(q as CFDictionary, nil), errSecSuccess)
        var result: AnyObject?
        let find: [String: Any] = [kSecClass as String: kSecClassInternetPassword, kSecAttrServer as String: "\(service).example.com",
                                   kSecReturnAttributes as String: true, kSecReturnData as String: true]
        XCTAssertEqual(SecItemCopyMatching(find as CFDictionary, &result), errSecSuccess)
        let d = result as? [String: Any]
        XCTAssertEqual(d?[kSecAttrProtocol as String] as? String, "htps")
        XCTAssertEqual((d?[kSecAttrPort as String] as? NSNumber)?.intValue, 8443)
        XCTAssertEqual(d?[kSecAttrPath as String] as? String, "/login")
        XCTAssertEqual(d?[kSecValueData as String] as? Data, Data("pw".utf8))
        XCTAssertEqual(SecItemDelete(find as CFDictionary), errSecSuccess)
    }

    // MARK: Authentication UI and errors

    func test_authenticationUIFail_isInteractionNotAllowed_andSkipLeavesTheItemOut() throws {
        let w = wrapper()
        w.set("ungated", forKey: "a")           // creates the keychain (one prompt)
        var error: Unmanaged<CFError>?
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .devicePasscode, &error))
        let gated: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                    kSecAttrAccount as String: "b", kSecAttrAccessControl as String: access,
                                    kSecValueData as String: Data("gated".utf8)]
        XCTAssertEqual(SecItemAdd(gated as CFDictionary, nil), errSecSuccess)
        var q: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                kSecAttrAccount as String: "b", kSecReturnData as String: true,
                                kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(q as CFDictionary, &result), errSecInteractionNotAllowed)
        XCTAssertTrue(SecCopyErrorMessageString(errSecInteractionNotAllowed, nil)?.contains("User interaction is not allowed.") ?? false)
        q[kSecUseAuthenticationUI as String] = kSecUseAuthenticationUISkip
        q[kSecAttrAccount as String] = nil
        q[kSecMatchLimit as String] = kSecMatchLimitAll
        XCTAssertEqual(SecItemCopyMatching(q as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? [Data], [Data("ungated".utf8)], "Skip leaves out the item that needs a prompt")
    }

    func test_wrongPassword_isAuthFailed_andCancel_isUserCanceled() {
        let w = wrapper()
        w.set("x", forKey: "a")
        _ = KeychainOperations_lockAll()
        person = ScriptedPrompter(["no", "nope", "never"])
        KeygateSecurityConfiguration.prompter = person
        XCTAssertNil(w.data(forKey: "a"))
        XCTAssertEqual(w.lastStatus, errSecAuthFailed)
        KeygateSecurityConfiguration.prompter = ScriptedPrompter([nil])
        XCTAssertNil(w.data(forKey: "a"))
        XCTAssertEqual(w.lastStatus, errSecUserCanceled)
    }

    private func KeychainOperations_lockAll() -> Int {
        (try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)) ?? 0
    }

    func test_secAccessControl_appliesApplesValidation() {
        var error: Unmanaged<CFError>?
        XCTAssertNil(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked,
                                                     [.userPresence, .biometryCurrentSet], &error))
        let e = error?.takeRetainedValue() as Error?
        XCTAssertEqual((e as NSError?)?.code, Int(errSecParam))
        XCTAssertNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.biometryAny, .biometryCurrentSet], nil))
        XCTAssertNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [.devicePasscode, .biometryAny, .or, .and], nil))
        XCTAssertNil(SecAccessControlCreateWithFlags(nil, "not-a-class", .userPresence, nil))
        XCTAssertNotNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, [], nil))
        XCTAssertNotNil(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlock, [.devicePasscode, .biometryAny, .or], nil))
        let both: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "x",
                                   kSecAttrAccessible as String: kSecAttrAccessibleWhenUnlocked,
                                   kSecAttrAccessControl as String: SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlocked, .userPresence, nil) as Any]
        XCTAssertEqual(SecItemAdd(both as CFDictionary, nil), errSecParam)
    }

    /// Every status Keygate produces is Apple's value, and the low byte is the CLI's exit code.
    func test_everyKeychainErrorCode_mapsToApplesStatus_andTheCLIsExitCode() {
        let expected: [KeychainError.Code: (OSStatus, Int32)] = [
            .itemNotFound: (errSecItemNotFound, 44), .duplicateItem: (errSecDuplicateItem, 45),
            .authFailed: (errSecAuthFailed, 51), .userCanceled: (errSecUserCanceled, 128),
            .interactionNotAllowed: (errSecInteractionNotAllowed, 36), .notAvailable: (errSecNotAvailable, 53),
            .param: (errSecParam, 206), .decode: (errSecDecode, 93),
        ]
        XCTAssertEqual(Set(expected.keys), Set(KeychainError.Code.allCases))
        for code in KeychainError.Code.allCases {
            let error = KeychainError(code, "m")
            let status = SecStatusMapping.status(for: error)
            XCTAssertEqual(status, expected[code]?.0, "\(code)")
            XCTAssertEqual(Int32(UInt32(bitPattern: status) & 0xFF), error.exitCode, "\(code)")
            XCTAssertEqual(error.exitCode, expected[code]?.1, "\(code)")
            XCTAssertNotNil(SecCopyErrorMessageString(status, nil))
        }
        XCTAssertEqual(noErr, errSecSuccess)
        XCTAssertEqual(errSecUnimplemented, -4)
    }

    // MARK: LocalAuthentication

    func test_LAContext_evaluatePolicy_isARealPAMAuthentication_andCarriesToReads() async throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)
        person = ScriptedPrompter([password, password])
        KeygateSecurityConfiguration.prompter = person
        var error: Unmanaged<CFError>?
        let access = try XCTUnwrap(SecAccessControlCreateWithFlags(kCFAllocatorDefault, kSecAttrAccessibleWhenUnlocked, .userPresence, &error))
        let add: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                  kSecAttrAccount as String: "g", kSecAttrAccessControl as String: access,
                                  kSecValueData as String: Data("gated".utf8)]
        XCTAssertEqual(SecItemAdd(add as CFDictionary, nil), errSecSuccess)   // creates the keychain: one prompt
        let context = LAContext()
        var nsError: NSError?
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &nsError))
        let ok = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "sign in")
        XCTAssertTrue(ok)
        let prompts = person.prompts.count
        XCTAssertTrue(person.prompts.last?.contains("sign in") ?? false, "\(person.prompts)")
        let read: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
                                   kSecAttrAccount as String: "g", kSecReturnData as String: true,
                                   kSecUseAuthenticationContext as String: context,
                                   kSecUseAuthenticationUI as String: kSecUseAuthenticationUIFail]
        var result: AnyObject?
        XCTAssertEqual(SecItemCopyMatching(read as CFDictionary, &result), errSecSuccess)
        XCTAssertEqual(result as? Data, Data("gated".utf8))
        XCTAssertEqual(person.prompts.count, prompts, "the evaluated context served the read")
        context.invalidate()
        do {
            _ = try await context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "again")
            XCTFail("an invalidated context must not evaluate")
        } catch LAError.invalidContext {
        } catch { XCTFail("\(error)") }
    }

    func test_LAContext_wrongPassword_isAuthenticationFailed_viaReply() {
        wrapper().set("x", forKey: "init")
        KeygateSecurityConfiguration.prompter = ScriptedPrompter(["bad", "worse", "worst"])
        let done = expectation(description: "reply")
        nonisolated(unsafe) var code: LAError.Code?
        LAContext().evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "r") { success, error in
            XCTAssertFalse(success)
            code = (error as? LAError)?.code
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(code, .authenticationFailed)
    }

    func test_LAContext_biometry_reportsWhatFprintdReports_andCapsReuse() throws {
        setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/keygate-test-bus", 1)
        defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
        let context = LAContext()
        XCTAssertEqual(context.biometryType, .none, "no fprintd to ask")
        var error: NSError?
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual(error?.code, LAError.Code.biometryNotAvailable.rawValue)
        XCTAssertEqual(error?.domain, LAErrorDomain)
        XCTAssertFalse(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithWatch, error: nil))
        context.touchIDAuthenticationAllowableReuseDuration = 3600
        XCTAssertEqual(context.touchIDAuthenticationAllowableReuseDuration, 300)

        // A real fprintd with libfprint's virtual reader: a reader, then a finger.
        let fprint = try FprintSession()
        defer { fprint.stop() }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", fprint.values["DBUS_SYSTEM_BUS_ADDRESS"] ?? "", 1)
        XCTAssertEqual(LAContext().biometryType, .touchID, "fprintd reports a reader, with no finger yet")
        error = nil
        XCTAssertFalse(LAContext().canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error))
        XCTAssertEqual(error?.code, LAError.Code.biometryNotEnrolled.rawValue, "\(String(describing: error))")
        try fprint.enroll(try UserAccount.current().name, as: "finger-a")
        error = nil
        XCTAssertTrue(LAContext().canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: &error),
                      "\(String(describing: error))")
    }

    /// evaluatePolicy with the biometric policy asks the gatekeeper for a finger (never the
    /// password), and evaluatedPolicyDomainState is a 32-byte value that stays while the enrolled set does and changes exactly when it changes
    /// (a second finger; every finger deleted: nil).
    func test_LAContext_evaluatePolicyWithBiometrics_takesAFinger_andTheDomainStateFollowsTheEnrolledSet() throws {
        let fprint = try FprintSession()
        defer { fprint.stop() }
        let me = try UserAccount.current().name
        let variables = fprint.gatekeeperEnvironment.merging(["DBUS_SYSTEM_BUS_ADDRESS": fprint.values["DBUS_SYSTEM_BUS_ADDRESS"] ?? "",
                                                              "KEYGATE_TEST_REUSE_DURATION": "0"]) { _, new in new }
        for (name, value) in variables { setenv(name, value, 1) }
        defer { for name in variables.keys { unsetenv(name) } }
        let stack = "auth required pam_fprintd.so max-tries=1 timeout=10\naccount required pam_permit.so\n"
        try stack.write(toFile: (environment?.pamConfdir ?? "/nonexistent") + "/keygate-biometry", atomically: true, encoding: .utf8)

        let none = LAContext()
        XCTAssertFalse(none.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil), "no finger yet")
        XCTAssertNil(none.evaluatedPolicyDomainState, "no enrolled set")
        try fprint.enroll(me, as: "finger-a")
        let context = LAContext()
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, error: nil))
        let first = try XCTUnwrap(context.evaluatedPolicyDomainState)
        XCTAssertEqual(first.count, 32)
        XCTAssertEqual(context.evaluatedPolicyDomainState, first, "the same set, the same value")

        person = ScriptedPrompter([])
        KeygateSecurityConfiguration.prompter = person
        fprint.touch("finger-a")
        XCTAssertEqual(evaluateBiometrics(context).code, 0, "the enrolled finger: \(person.notices)")
        fprint.touch("finger-b")
        XCTAssertEqual(evaluateBiometrics(context).code, LAError.Code.authenticationFailed.rawValue, "a wrong finger")
        fprint.settle()
        XCTAssertTrue(person.prompts.isEmpty, "a finger, never the password: \(person.prompts)")
        XCTAssertTrue(person.notices.contains { $0.contains("finger") }, "fprintd's words are relayed: \(person.notices)")
        XCTAssertEqual(context.evaluatedPolicyDomainState, first, "a verification does not change the set")

        try fprint.enroll(me, finger: "left-index-finger", as: "finger-c")
        let second = try XCTUnwrap(context.evaluatedPolicyDomainState)
        XCTAssertNotEqual(second, first, "a finger enrolled: another value")
        XCTAssertEqual(second.count, 32)
        try fprint.deletePrints(me)
        XCTAssertNil(context.evaluatedPolicyDomainState, "every finger deleted: nil")
    }

    /// evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics) through its reply form; 0 when it
    /// succeeded, else the LAError code.
    private func evaluateBiometrics(_ context: LAContext) -> (code: Int, error: String) {
        final class Outcome: @unchecked Sendable { var code = -1; var error = "" }
        let outcome = Outcome()
        let done = expectation(description: "evaluatePolicy")
        context.evaluatePolicy(.deviceOwnerAuthenticationWithBiometrics, localizedReason: "check the finger") { ok, error in
            outcome.code = ok ? 0 : ((error as NSError?)?.code ?? -2)
            outcome.error = error.map { "\($0)" } ?? ""
            done.fulfill()
        }
        wait(for: [done], timeout: 40)
        return (outcome.code, outcome.error)
    }
}
