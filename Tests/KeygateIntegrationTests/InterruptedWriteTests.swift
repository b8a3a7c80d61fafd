// What a Secret Service leaves when it is killed inside CreateItem: an item with Keygate's
// attributes and an empty secret (gnome-keyring saves its file once for the attributes and
// once for the secret). DyingDependencyTests kills the real daemon at random and sometimes
// lands there; this test makes that state on purpose, in the real gnome-keyring, and checks
// that a read sees no item and the next add takes its place.
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class InterruptedWriteTests: XCTestCase {
    private var environment: InProcessKeychain?

    override func setUpWithError() throws { environment = try InProcessKeychain() }
    override func tearDown() { environment?.tearDown() }

    func test_anItemWithAnEmptySecret_readsAsAbsent_andTheNextAddReplacesIt() throws {
        let environment = try XCTUnwrap(environment)
        let operations = try KeychainOperations(prompter: ScriptedPrompter(answers: [environment.password]))
        let identity = ItemIdentity.generic(service: "interrupted-\(UUID().uuidString.prefix(8))", account: "alice")
        defer { _ = try? operations.store.delete(ItemQuery(exactly: identity)) }
        try operations.add(ItemAttributes(identity: identity), secret: secureBytes("first"), replace: false)  // makes the keychain
        XCTAssertEqual(try operations.store.delete(ItemQuery(exactly: identity)), 1)
        try operations.store.create(ItemAttributes(identity: identity), blob: [], replace: false)

        XCTAssertNil(try operations.secret(for: identity), "a half-created item reads as absent, not as a corrupt one")
        try operations.add(ItemAttributes(identity: identity), secret: secureBytes("second"), replace: false)
        XCTAssertEqual(try operations.secret(for: identity).map { String(decoding: $0.unprotectedCopy(), as: UTF8.self) }, "second")
        XCTAssertEqual(try operations.store.search(ItemQuery(exactly: identity), loadBlobs: false).count, 1)

        XCTAssertThrowsError(try operations.add(ItemAttributes(identity: identity), secret: secureBytes("third"), replace: false)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .duplicateItem, "a complete item is still a duplicate")
        }
    }

    private func secureBytes(_ text: String) throws -> SecureBytes {
        var bytes = Array(text.utf8)
        return try SecureBytes(consuming: &bytes)
    }
}
