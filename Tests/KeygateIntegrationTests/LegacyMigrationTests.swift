// A keychain made by Keygate 1.x (the frozen FormatVectors: its login.json with the wrapped
// presence and current-set keys, keys.json, and gated blobs sealed to them) meets the
// gatekeeper: the first read with the password moves every gated item to the gatekeeper's
// keys, drops the 1.x keys, and loses nothing. The built keygate-gatekeeper, real libpam
// (pam_matrix with the vectors' password) and the embedded store, in this process.
import Foundation
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class LegacyMigrationTests: XCTestCase {
    private static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().path + "/KeygateTests/FormatVectors"
    private static let password = "correct horse battery staple"
    private static let secret = "hunter2 \u{1F511} frozen"
    private static let identity = ItemIdentity.generic(service: "vpn", account: "alice")

    private var sandbox: GatekeeperSandbox?
    private var dataHome = ""

    override func setUpWithError() throws {
        sandbox = try GatekeeperSandbox(services: ["keygate": Self.password])
        dataHome = NSTemporaryDirectory() + "keygate-legacy-\(UUID().uuidString)"
        let folder = dataHome + "/keygate"
        try FileManager.default.createDirectory(atPath: folder + "/protectors", withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for file in ["keys.json", "protectors/login.json", "protectors/recovery.json"] {
            try FileManager.default.copyItem(atPath: Self.vectors + "/keychain/" + file, toPath: folder + "/" + file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder + "/" + file)
        }
        setenv("XDG_DATA_HOME", dataHome, 1)
        setenv("KEYGATE_STORE", "embedded", 1)
        try KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
    }

    override func tearDownWithError() throws {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        sandbox?.tearDown()
        unsetenv("XDG_DATA_HOME")
        unsetenv("KEYGATE_STORE")
        try? FileManager.default.removeItem(atPath: dataHome)
    }

    private func frozenBlob(_ name: String) throws -> [UInt8] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.vectors + "/vectors.json"))
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        let hex = try XCTUnwrap((object["blobs"] as? [String: String])?[name], name)
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(try XCTUnwrap(UInt8(hex[index..<next], radix: 16)))
            index = next
        }
        return out
    }

    private func migrate(_ name: String) throws {
        let blob = try frozenBlob(name)
        let header = try GatedBlob.header(of: blob)
        let store = EmbeddedStore(directory: dataHome + "/keygate")
        // The attribute as the CLI shows it; the blob's header keeps the flags 1.x sealed with.
        try store.create(ItemAttributes(identity: Self.identity, accessibility: header.accessibility, accessControl: .userPresence),
                         blob: blob, replace: false)
        let folder = dataHome + "/keygate"
        XCTAssertTrue(KeyStore(directory: folder).hasLegacyGateKeys, "a 1.x keychain")

        let person = ScriptedPrompter([Self.password])
        let read = try KeychainOperations(prompter: person).secret(for: Self.identity)
        XCTAssertEqual(read.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }, Self.secret, "nothing lost")
        XCTAssertEqual(person.prompts.count, 1, "one prompt: the migration needs the password the read asked for")

        let moved = try XCTUnwrap(try store.search(ItemQuery(exactly: Self.identity), loadBlobs: true).first?.blob)
        let movedHeader = try GatedBlob.header(of: moved)
        XCTAssertNotEqual(movedHeader.gateSlots.map(\.keyID), header.gateSlots.map(\.keyID), "sealed again, to the gatekeeper's keys")
        // The flags 1.x sealed with are kept; its current-set, Apple's biometryCurrentSet bit in 1.x, was bound to the
        // password, which Keygate's own current-set flag means now.
        var expected = AccessControl(rawValue: header.accessControl)
        XCTAssertTrue(expected.contains(.biometryCurrentSet), "1.x's current-set")
        expected.remove(.biometryCurrentSet)
        expected.insert(.currentSet)
        XCTAssertEqual(movedHeader.accessControl, expected.rawValue, "the flags 1.x sealed with, current-set under its own bit")
        XCTAssertEqual(movedHeader.combination, header.combination)
        XCTAssertFalse(KeyStore(directory: folder).hasLegacyGateKeys, "1.x's gate keys left login.json")
        let keys = try XCTUnwrap(try PublicKeys.load(directory: folder))
        XCTAssertNil(keys.presence)
        XCTAssertNil(keys.currentSet)

        // After a lock, the item opens through the gatekeeper alone (one prompt for unlock and presence).
        _ = try KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        let again = ScriptedPrompter([Self.password])
        let second = try KeychainOperations(prompter: again).secret(for: Self.identity)
        XCTAssertEqual(second.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }, Self.secret)
        XCTAssertEqual(again.prompts.count, 1)
    }

    func test_a1xOrItem_movesToTheGatekeeper_onTheFirstRead() throws {
        try migrate("scheme2-or-presence-current-set")
    }

    func test_a1xAndItem_movesToTheGatekeeper_onTheFirstRead() throws {
        try migrate("scheme2-and-presence-current-set")
    }
}
