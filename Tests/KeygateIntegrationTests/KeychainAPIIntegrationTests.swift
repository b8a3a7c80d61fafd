// The Swift API end to end in one process: a real gnome-keyring on the private
// session bus, real libpam (pam_matrix through pam_start_confdir), the real kernel
// keyring and real Argon2id (at the test-hook cost). Only the person typing is scripted.
import Foundation
import Keygate
import KeygateTestSupport
import XCTest

final class KeychainAPIIntegrationTests: XCTestCase {
    private var environment: InProcessKeychain?
    private var password: String { environment?.password ?? "" }
    private var service = ""

    override func setUpWithError() throws {
        environment = try InProcessKeychain()
        service = "api-test-\(UUID().uuidString.prefix(8))"
    }

    override func tearDownWithError() throws {
        try? Keychain(service: service).removeAll()
        environment?.tearDown()
    }

    func test_set_then_read_roundTrips_andPromptsOnceForTheFirstUnlock() throws {
        let person = ScriptedPrompter(answers: [password])
        let keychain = Keychain(service: service).prompter(person)
        try keychain.set("s3cret", for: "alice")
        XCTAssertEqual(try keychain.string(for: "alice"), "s3cret")
        XCTAssertEqual(person.prompts.count, 1, "init prompted once; the read used the cached key")
        XCTAssertTrue(person.notices.contains { $0.contains("Recovery key") }, "the recovery key is shown once")
        try keychain.set(Data([0, 1, 2, 255]), for: "bin")
        XCTAssertEqual(try keychain.data(for: "bin"), Data([0, 1, 2, 255]))
    }

    func test_missingItem_isNil_notAnError() throws {
        let keychain = Keychain(service: service).prompter(ScriptedPrompter(answers: [password]))
        XCTAssertNil(try keychain.data(for: "nobody"))
        XCTAssertFalse(try keychain.contains("nobody"))
        XCTAssertNil(try keychain.attributes(for: "nobody"))
        XCTAssertNoThrow(try keychain.remove("nobody"))
    }

    func test_add_failsOnDuplicate_setReplaces() throws {
        let keychain = Keychain(service: service).prompter(ScriptedPrompter(answers: [password]))
        try keychain.add("one", for: "a")
        XCTAssertThrowsError(try keychain.add("two", for: "a")) { error in
            XCTAssertEqual((error as? KeychainError)?.status, -25299)
        }
        try keychain.set("three", for: "a")
        XCTAssertEqual(try keychain.string(for: "a"), "three")
        XCTAssertEqual(try keychain.allKeys(), ["a"])
    }

    func test_codable_roundTrips() throws {
        struct Token: Codable, Equatable { var value: String; var expires: Int }
        let keychain = Keychain(service: service).prompter(ScriptedPrompter(answers: [password]))
        try keychain.set(Token(value: "t", expires: 42), for: "tok")
        XCTAssertEqual(try keychain.decode(Token.self, for: "tok"), Token(value: "t", expires: 42))
    }

    func test_attributes_labelCommentAndDates() throws {
        let keychain = Keychain(service: service).label("My label").comment("note")
            .prompter(ScriptedPrompter(answers: [password]))
        let before = UInt64(Date().timeIntervalSince1970) - 1
        try keychain.set("x", for: "acct")
        let a = try XCTUnwrap(keychain.attributes(for: "acct"))
        XCTAssertEqual(a.label, "My label")
        XCTAssertEqual(a.comment, "note")
        XCTAssertGreaterThanOrEqual(a.created, before)
        XCTAssertGreaterThanOrEqual(a.modified, a.created)
    }

    func test_removeAll_removesOnlyThisService() throws {
        let person = ScriptedPrompter(answers: [password])
        let mine = Keychain(service: service).prompter(person)
        let other = Keychain(service: service + "-other").prompter(person)
        try mine.set("1", for: "a")
        try mine.set("2", for: "b")
        try other.set("3", for: "a")
        try mine.removeAll()
        XCTAssertEqual(try mine.allKeys(), [])
        XCTAssertEqual(try other.string(for: "a"), "3")
        try other.removeAll()
    }

    func test_internetPassword_roundTrips_andIsDistinctFromGeneric() throws {
        let person = ScriptedPrompter(answers: [password])
        let web = Keychain(server: service, protocol: .https, port: 8443, path: "/login").prompter(person)
        let generic = Keychain(service: service).prompter(person)
        try web.set("web", for: "u")
        try generic.set("gen", for: "u")
        XCTAssertEqual(try web.string(for: "u"), "web")
        XCTAssertEqual(try generic.string(for: "u"), "gen")
        try web.removeAll()
    }

    func test_wrongPassword_threeTimes_isAuthFailed() throws {
        // Create the keychain first, then lock and try with wrong answers.
        try Keychain(service: service).prompter(ScriptedPrompter(answers: [password])).set("x", for: "a")
        try KeychainOperations(prompter: ScriptedPrompter(answers: [])).lock(all: true)
        let person = ScriptedPrompter(answers: ["no", "nope", "never"])
        XCTAssertThrowsError(try Keychain(service: service).prompter(person).data(for: "a")) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .authFailed)
        }
        XCTAssertEqual(person.prompts.count, 3)
    }

    func test_canceledPrompt_isUserCanceled() throws {
        try Keychain(service: service).prompter(ScriptedPrompter(answers: [password])).set("x", for: "a")
        try KeychainOperations(prompter: ScriptedPrompter(answers: [])).lock(all: true)
        XCTAssertThrowsError(try Keychain(service: service).prompter(ScriptedPrompter(answers: [nil])).data(for: "a")) {
            XCTAssertEqual(($0 as? KeychainError)?.exitCode, 128)
        }
    }

    func test_asyncVariants_work() async throws {
        let keychain = Keychain(service: service).prompter(ScriptedPrompter(answers: [password]))
        try await keychain.set("async", for: "a")
        let value = try await keychain.string(for: "a")
        XCTAssertEqual(value, "async")
        let keys = try await keychain.allKeys()
        XCTAssertEqual(keys, ["a"])
        try await keychain.remove("a")
        let gone = try await keychain.contains("a")
        XCTAssertFalse(gone)
    }

    func test_oneAuthenticationContext_promptsOnceForSeveralGatedReads() throws {
        setenv("KEYGATE_TEST_REUSE_DURATION", "0", 1)   // no kernel-keyring window: only the context can help
        defer { unsetenv("KEYGATE_TEST_REUSE_DURATION") }
        let person = ScriptedPrompter([password, password, password, password])
        let gated = Keychain(service: service).accessibility(.whenUnlocked, access: .userPresence).prompter(person)
        try gated.set("one", for: "a")
        try gated.set("two", for: "b")
        let afterAdds = person.prompts.count          // the implicit init
        let context = AuthenticationContext()
        context.localizedReason = "read two tokens"
        let reader = gated.authenticationContext(context)
        XCTAssertEqual(try reader.string(for: "a"), "one")
        XCTAssertEqual(try reader.string(for: "b"), "two")
        XCTAssertEqual(person.prompts.count, afterAdds + 1, "one prompt for both reads")
        XCTAssertTrue(person.prompts.last?.contains("read two tokens") ?? false, "the reason is shown: \(person.prompts)")
        context.invalidate()
        XCTAssertEqual(try reader.string(for: "a"), "one")
        XCTAssertEqual(person.prompts.count, afterAdds + 2, "an invalidated context prompts again")
    }

    func test_anItemCreatedWithNoAccessControl_hasNone_underTheShippedPolicy_asOnApple() throws {
        // The shipped vendor policy (default-access = user-presence is the CLI's default, not the library's).
        let root = NSTemporaryDirectory() + "keygate-shipped-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: root) }
        for layer in ["vendor", "admin", "user"] {
            try FileManager.default.createDirectory(atPath: root + "/" + layer, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
        }
        try FileManager.default.copyItem(atPath: PackagePaths.root + "/policies/00-default.policy", toPath: root + "/vendor/00-default.policy")
        setenv("KEYGATE_TEST_POLICY_ROOT", root, 1)
        let person = ScriptedPrompter([password])
        try Keychain(service: service).prompter(person).set("plain", for: "a")
        XCTAssertEqual(person.prompts.count, 1, "the implicit init only")
        let nobody = ScriptedPrompter([], available: false)
        XCTAssertEqual(try Keychain(service: service).prompter(nobody).string(for: "a"), "plain",
                       "a plain item reads while the keychain is unlocked, with no prompt")
        XCTAssertEqual(nobody.prompts, [])
        XCTAssertNil(try Keychain(service: service).attributes(for: "a")?.accessControl)
        // What its creator asks for, it gets.
        try Keychain(service: service).accessibility(.whenUnlocked, access: .userPresence).prompter(person).set("gated", for: "b")
        XCTAssertEqual(try Keychain(service: service).attributes(for: "b")?.accessControl, .userPresence)
        XCTAssertThrowsError(try Keychain(service: service).prompter(nobody).string(for: "b")) {
            XCTAssertEqual(($0 as? KeychainError)?.code, .interactionNotAllowed)
        }
    }

    func test_interactionNotAllowed_context_refusesToPrompt() throws {
        let gated = Keychain(service: service).accessibility(.whenUnlocked, access: .devicePasscode)
            .prompter(ScriptedPrompter([password]))
        try gated.set("x", for: "a")
        try KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        let context = AuthenticationContext()
        context.interactionNotAllowed = true
        XCTAssertThrowsError(try gated.authenticationContext(context).data(for: "a")) {
            XCTAssertEqual(($0 as? KeychainError)?.code, .interactionNotAllowed)
        }
    }

    func test_accessControl_isValidated_beforeAnythingIsStored() throws {
        let bad = Keychain(service: service)
            .accessibility(.whenUnlocked, access: [.userPresence, .biometryCurrentSet])
            .prompter(ScriptedPrompter([password]))
        XCTAssertThrowsError(try bad.set("x", for: "a")) { XCTAssertEqual(($0 as? KeychainError)?.status, -50) }
        XCTAssertFalse(try Keychain(service: service).contains("a"))
    }
}
