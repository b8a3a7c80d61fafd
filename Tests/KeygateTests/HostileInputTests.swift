// Hostile input to the library, each refused with a clear KeychainError and no crash:
// oversize secrets and attributes, NUL bytes in names (libsecret would truncate them to
// another item's name), blobs from a future format, and a sealed blob swapped between two
// items in the real Secret Service (it must fail to open). The store tests use the real
// gnome-keyring session (Requirement: they fail under CI=true when it is missing).
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class HostileInputTests: XCTestCase {
    /// Inputs refused across this class (printed at the end, for the closing note).
    nonisolated(unsafe) static var refused = 0

    override class func tearDown() {
        print("HostileInputTests: \(refused) hostile inputs refused")
    }

    private func assertRefused(_ code: KeychainError.Code, containing fragment: String? = nil, _ what: String,
                               file: StaticString = #filePath, line: UInt = #line, _ body: () throws -> Void) {
        do {
            try body()
            XCTFail("\(what) was accepted", file: file, line: line)
        } catch let error as KeychainError {
            XCTAssertEqual(error.code, code, "\(what): \(error.message)", file: file, line: line)
            XCTAssertFalse(error.message.isEmpty, file: file, line: line)
            if let fragment {
                XCTAssertTrue(error.message.contains(fragment), "\(what): \"\(error.message)\" lacks \"\(fragment)\"", file: file, line: line)
            }
            Self.refused += 1
        } catch {
            XCTFail("\(what) threw \(error), not a KeychainError", file: file, line: line)
        }
    }

    private static func secret(_ count: Int) throws -> SecureBytes {
        var bytes = [UInt8](repeating: 0x41, count: count)
        return try SecureBytes(consuming: &bytes)
    }

    // MARK: Pure

    func test_seal_refusesSecretsOverTheLimit_inBothSchemes_butSealsTheLimitItself() throws {
        let key = try SecureBytes.random(count: 32)
        let pair = try BoxKeyPair.generate()
        let id = ItemIdentity.generic(service: "s", account: "a")
        let over = try Self.secret(SealedBlob.maxSecretLength + 1)
        assertRefused(.param, containing: "at most", "a secret one byte over the limit (scheme 1)") {
            _ = try SealedBlob.seal(over, identity: id, accessibility: .whenUnlocked, classKey: key)
        }
        assertRefused(.param, containing: "at most", "a secret one byte over the limit (scheme 2)") {
            _ = try GatedBlob.seal(over, identity: id, accessibility: .whenUnlocked, accessControl: 0,
                                   classKey: pair.publicKey, gates: [], combination: .any)
        }
        let exact = try Self.secret(SealedBlob.maxSecretLength)
        let blob = try SealedBlob.seal(exact, identity: id, accessibility: .whenUnlocked, classKey: key)
        XCTAssertEqual(try SealedBlob.open(blob, identity: id, classKey: key).count, SealedBlob.maxSecretLength)
    }

    func test_header_refusesBlobsFromAFutureFormat_withUpgradeAdvice() throws {
        let key = try SecureBytes.random(count: 32)
        let id = ItemIdentity.generic(service: "s", account: "a")
        let blob = try SealedBlob.seal(try Self.secret(8), identity: id, accessibility: .whenUnlocked, classKey: key)
        for (offset, value, what) in [(3, SealedBlob.currentVersion + 1, "format version"), (3, 255, "format 255"),
                                      (4, 9, "sealing scheme"), (5, 99, "accessibility code")] as [(Int, UInt8, String)] {
            var future = blob
            future[offset] = value
            assertRefused(.decode, containing: "upgrade keygate", "a blob with a future \(what)") {
                _ = try SealedBlob.open(future, identity: id, classKey: key)
            }
        }
        var gated = try GatedBlob.seal(try Self.secret(8), identity: id, accessibility: .whenUnlocked, accessControl: 0,
                                       classKey: try BoxKeyPair.generate().publicKey, gates: [], combination: .any)
        gated[10] = 7   // a combination code no Keygate writes
        assertRefused(.decode, containing: "upgrade keygate", "a gated blob with a future combination") {
            _ = try GatedBlob.header(of: gated)
        }
    }

    func test_open_fails_whenBlobMovedToAnotherItem_evenWithTheRightKey() throws {
        let key = try SecureBytes.random(count: 32)
        let a = ItemIdentity.generic(service: "s", account: "a")
        let b = ItemIdentity.generic(service: "s", account: "b")
        let blob = try SealedBlob.seal(try Self.secret(8), identity: a, accessibility: .whenUnlocked, classKey: key)
        XCTAssertEqual(try SealedBlob.open(blob, identity: a, classKey: key).count, 8, "control: it opens for its own item")
        assertRefused(.decode, containing: "moved from another item", "a blob moved to another item") {
            _ = try SealedBlob.open(blob, identity: b, classKey: key)
        }
    }

    func test_fieldLimits_refuseNULBytes_andOversizeValues_inEveryField() throws {
        let long = String(repeating: "x", count: ItemFieldLimits.maximumNameBytes + 1)
        let huge = String(repeating: "y", count: ItemFieldLimits.maximumAttributeBytes + 1)
        let ok = ItemAttributes(identity: .generic(service: "s", account: "a"))
        XCTAssertNoThrow(try ItemFieldLimits.check(ok), "control: an ordinary item passes")
        var cases: [(String, ItemAttributes)] = []
        for (name, change) in [("service", { (a: inout ItemAttributes, v: String) in a.identity.service = v }),
                               ("account", { $0.identity.account = $1 }), ("server", { $0.identity.server = $1 }),
                               ("path", { $0.identity.path = $1 }), ("security domain", { $0.identity.securityDomain = $1 }),
                               ("label", { $0.label = $1 }), ("comment", { $0.comment = $1 }),
                               ("description", { $0.description = $1 }), ("access group", { $0.accessGroup = $1 })]
            as [(String, (inout ItemAttributes, String) -> Void)] {
            var withNUL = ok; change(&withNUL, "vpn\u{0}evil"); cases.append(("a NUL byte in the \(name)", withNUL))
            var oversize = ok; change(&oversize, name.contains("label") || name.contains("comment") || name.contains("desc") || name.contains("group") ? huge : long)
            cases.append(("an oversize \(name)", oversize))
        }
        var generic = ok; generic.generic = [UInt8](repeating: 1, count: ItemFieldLimits.maximumAttributeBytes + 1)
        cases.append(("an oversize generic attribute", generic))
        for (what, attributes) in cases {
            assertRefused(.param, what) { try ItemFieldLimits.check(attributes) }
        }
        assertRefused(.param, containing: "NUL", "a NUL byte in a searched-for service") {
            try ItemFieldLimits.check(ItemQuery(itemClass: .genericPassword, service: "a\u{0}b"))
        }
        var changes = ItemChanges(); changes.account = "b\u{0}"
        assertRefused(.param, containing: "NUL", "a NUL byte in an update") { try ItemFieldLimits.check(changes) }
    }

    // MARK: The real store

    func test_add_refusesOversizeSecret_NULNames_andOversizeLabels_andStoresNothing() throws {
        let environment = try InProcessKeychain()
        defer { environment.tearDown() }
        let service = "hostile-\(UUID().uuidString.prefix(8))"
        let ops = try KeychainOperations(prompter: ScriptedPrompter([environment.password]))
        try ops.add(ItemAttributes(identity: .generic(service: service, account: "control")), secret: try Self.secret(4), replace: false)
        let attempts: [(String, ItemAttributes, Int)] = [
            ("an oversize secret", ItemAttributes(identity: .generic(service: service, account: "big")), SealedBlob.maxSecretLength + 1),
            ("a NUL byte in the account", ItemAttributes(identity: .generic(service: service, account: "ctrl\u{0}x")), 4),
            ("a NUL byte in the service", ItemAttributes(identity: .generic(service: service + "\u{0}x", account: "n")), 4),
            ("an oversize label", ItemAttributes(identity: .generic(service: service, account: "label"),
                                                 label: String(repeating: "l", count: 100_000)), 4),
        ]
        for (what, attributes, size) in attempts {
            assertRefused(.param, what) { try ops.add(attributes, secret: try Self.secret(size), replace: false) }
        }
        let stored = try ops.attributes(matching: ItemQuery(itemClass: .genericPassword, service: service))
        XCTAssertEqual(stored.map(\.identity.account), ["control"], "only the control item was stored")
        assertRefused(.param, containing: "NUL", "a delete whose service has a NUL byte") {
            _ = try ops.delete(matching: ItemQuery(itemClass: .genericPassword, service: service + "\u{0}suffix"))
        }
        XCTAssertEqual(try ops.attributes(matching: ItemQuery(itemClass: .genericPassword, service: service)).count, 1,
                       "the NUL delete removed nothing (libsecret would have truncated it to the control's service)")
        _ = try ops.delete(matching: ItemQuery(itemClass: .genericPassword, service: service))
    }

    func test_secret_fails_whenBlobsAreSwappedBetweenTwoItemsInTheRealStore() throws {
        let environment = try InProcessKeychain()
        defer { environment.tearDown() }
        let service = "hostile-\(UUID().uuidString.prefix(8))"
        let ops = try KeychainOperations(prompter: ScriptedPrompter([environment.password]))
        let a = ItemIdentity.generic(service: service, account: "alice")
        let b = ItemIdentity.generic(service: service, account: "bob")
        var s1 = Array("alice-secret".utf8), s2 = Array("bob-secret".utf8)
        try ops.add(ItemAttributes(identity: a), secret: try SecureBytes(consuming: &s1), replace: false)
        try ops.add(ItemAttributes(identity: b), secret: try SecureBytes(consuming: &s2), replace: false)
        defer { _ = try? ops.delete(matching: ItemQuery(itemClass: .genericPassword, service: service)) }
        XCTAssertEqual(try ops.secret(for: a)?.withUnsafeBytes { Array($0) }, Array("alice-secret".utf8), "control: it opens before the swap")

        // Swap the stored blobs through libsecret directly, keeping each item's attributes.
        let store = SecretServiceStore(environment: .process())
        guard let itemA = try store.search(ItemQuery(exactly: a), loadBlobs: true).first, let blobA = itemA.blob,
              let itemB = try store.search(ItemQuery(exactly: b), loadBlobs: true).first, let blobB = itemB.blob else {
            return XCTFail("both items are in the store with their blobs")
        }
        try store.create(itemA.attributes, blob: blobB, replace: true)
        try store.create(itemB.attributes, blob: blobA, replace: true)
        assertRefused(.decode, containing: "moved from another item", "alice's item holding bob's blob") { _ = try ops.secret(for: a) }
        assertRefused(.decode, containing: "moved from another item", "bob's item holding alice's blob") { _ = try ops.secret(for: b) }

        // And a blob from a future format version.
        var future = blobA
        future[3] = SealedBlob.currentVersion + 1
        try store.create(itemA.attributes, blob: future, replace: true)
        assertRefused(.decode, containing: "upgrade keygate", "a stored blob from a future format") { _ = try ops.secret(for: a) }
    }
}
