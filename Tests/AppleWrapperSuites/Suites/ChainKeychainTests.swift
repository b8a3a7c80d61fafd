// The fluent wrapper's own suite, in KeychainAccess's test style: each test starts by
// removing the service's items, and leaves what it made behind (so the second run of the
// suite meets the first run's synchronizable items, as a person's second run does).
// Imports XCTest only: the Security names reach it as they reach an Apple test file.
import XCTest

final class ChainKeychainTests: WrapperSuiteCase {
    private let keychain = ChainKeychain(service: "com.example.chain-tests")

    override func setUpWithError() throws {
        try super.setUpWithError()
        try keychain.removeAll()   // local items only, as KeychainAccess's removeAll() without synchronizable
    }

    func testSetGetAndRemove_stringAndData() throws {
        keychain["username"] = "kishikawa_katsumi"
        XCTAssertEqual(keychain["username"], "kishikawa_katsumi")
        try keychain.set(Data([0, 1, 0xfe, 0xff]), key: "blob")
        XCTAssertEqual(try keychain.getData("blob"), Data([0, 1, 0xfe, 0xff]))
        keychain["username"] = nil
        XCTAssertNil(keychain["username"])
        XCTAssertEqual(try keychain.allKeys(), ["blob"])
    }

    func testSetTwice_updatesTheOneItem() throws {
        try keychain.set("first", key: "token")
        let created = try XCTUnwrap(try keychain.attributes("token")?[kSecAttrCreationDate as String] as? Date)
        try keychain.set("second", key: "token")
        XCTAssertEqual(try keychain.get("token"), "second")
        XCTAssertEqual(try keychain.allKeys(), ["token"])
        XCTAssertEqual(try keychain.attributes("token")?[kSecAttrCreationDate as String] as? Date, created)
    }

    func testAllKeys_comeInCreationOrder() throws {
        for key in ["zulu", "alpha", "mike", "bravo"] { try keychain.set(key.uppercased(), key: key) }
        XCTAssertEqual(try keychain.allKeys(), ["zulu", "alpha", "mike", "bravo"])
    }

    func testSynchronizableAndLocalItemsWithOneKey_areTwoItems() throws {
        // The second run finds the first run's synchronizable item still there: removeAll()
        // in setUp removes local items only. The local add must not collide with it.
        try keychain.synchronizable(true).set("cloud", key: "token")
        try keychain.set("local", key: "token")
        XCTAssertEqual(try keychain.get("token"), "local", "no kSecAttrSynchronizable: the local item")
        XCTAssertEqual(try keychain.synchronizable(true).get("token"), "cloud")
        XCTAssertEqual(try keychain.synchronizableAny().allKeys().filter { $0 == "token" }.count, 2, "kSecAttrSynchronizableAny: both")
        try keychain.remove("token")
        XCTAssertNil(try keychain.get("token"))
        XCTAssertEqual(try keychain.synchronizable(true).get("token"), "cloud", "removing the local item leaves its twin")
    }

    func testBooleanAttributes_bridgeToBoolAndNSNumber() throws {
        try keychain.synchronizable(true).set("cloud", key: "flagged")
        try keychain.set("local", key: "plain")
        let cloud = try XCTUnwrap(try keychain.synchronizable(true).attributes("flagged"))
        let local = try XCTUnwrap(try keychain.attributes("plain"))
        XCTAssertEqual(cloud[kSecAttrSynchronizable as String] as? Bool, true)
        XCTAssertEqual(cloud[kSecAttrSynchronizable as String] as? NSNumber, kCFBooleanTrue)
        XCTAssertTrue((cloud[kSecAttrSynchronizable as String] as? NSNumber) == true)
        XCTAssertEqual(local[kSecAttrSynchronizable as String] as? Bool, false)
        let query: [String: Any] = [kSecReturnData as String: kCFBooleanTrue as Any, kSecAttrIsInvisible as String: true]
        XCTAssertEqual(query[kSecReturnData as String] as? Bool, true, "kCFBooleanTrue read back from a dictionary")
        XCTAssertEqual(query[kSecAttrIsInvisible as String] as? NSNumber, kCFBooleanTrue, "true read back as a CFBoolean")
        XCTAssertEqual(CFGetTypeID(kCFBooleanTrue), CFBooleanGetTypeID())
    }

    func testUserPresenceItem_readsAfterAPrompt_orFailsAtOnceWithoutOne() throws {
        let gated = keychain.accessibility(kSecAttrAccessibleWhenUnlocked, authenticationPolicy: .userPresence)
        try gated.set("s3cret", key: "gated")   // adding never asks
        let started = Date()
        if canPrompt {
            XCTAssertEqual(try gated.authenticationPrompt("read the test item").get("gated"), "s3cret")
        } else {
            XCTAssertThrowsError(try gated.get("gated")) { error in
                XCTAssertEqual(error as? ChainKeychainError, .status(errSecInteractionNotAllowed))
            }
            XCTAssertLessThan(Date().timeIntervalSince(started), 10, "no prompter: fail at once, never hang")
        }
        XCTAssertEqual(try keychain.allKeys(), ["gated"], "listing a gated item never asks")
    }

    func testLAContext_evaluatePolicy_thenTheContextServesTheRead() throws {
        let context = LAContext()
        context.localizedReason = "unlock the test item"
        var error: NSError?
        XCTAssertTrue(context.canEvaluatePolicy(.deviceOwnerAuthentication, error: &error), "\(String(describing: error))")
        try keychain.accessibility(kSecAttrAccessibleWhenUnlocked, authenticationPolicy: .userPresence).set("ctx", key: "viaContext")
        let done = expectation(description: "reply")
        let outcome = Reply()
        context.evaluatePolicy(.deviceOwnerAuthentication, localizedReason: "unlock the test item") { success, error in
            outcome.set(success, error)
            done.fulfill()
        }
        wait(for: [done], timeout: 30)
        if canPrompt {
            XCTAssertTrue(outcome.success, "\(String(describing: outcome.error))")
            XCTAssertEqual(try keychain.authenticationContext(context).get("viaContext"), "ctx")
        } else {
            XCTAssertFalse(outcome.success)
            XCTAssertEqual((outcome.error as? LAError)?.code, .notInteractive)
        }
    }
}

/// evaluatePolicy's reply, handed from its queue to the test.
private final class Reply: @unchecked Sendable {
    private let lock = NSLock()
    private var value: (Bool, Error?) = (false, nil)
    var success: Bool { lock.lock(); defer { lock.unlock() }; return value.0 }
    var error: Error? { lock.lock(); defer { lock.unlock() }; return value.1 }
    func set(_ success: Bool, _ error: Error?) { lock.lock(); value = (success, error); lock.unlock() }
}
