// [secret-service] policy sections: the access an item a Secret Service client makes gets, by its
// attributes (xdg:schema, and optionally one more attribute by glob). None by default; a section
// may raise it; a user's file only tightens; Keygate's own items never see these sections, nor
// clients' items Keygate's; bad headers and keys are file:line:column errors.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateCore

final class SecretServicePolicyTests: XCTestCase {
    private func parse(_ text: String) -> ParsedPolicy { PolicyParser.parse(text, file: "t.policy") }

    private let wifi = ["xdg:schema": "org.gnome.keyring.NetworkPassword", "server": "vpn.example.org", "user": "alice"]

    func test_aSchemaSection_andAnAttributeSection_matchByAttributes() throws {
        let parsed = parse("""
            [secret-service "org.gnome.keyring.NetworkPassword"]
            access = user-presence

            [secret-service "*" attribute "server=*.example.org"]
            default-access = biometry-any
            """)
        XCTAssertEqual(parsed.errors, [])
        XCTAssertEqual(parsed.sections.map(\.title), ["[secret-service \"org.gnome.keyring.NetworkPassword\"]",
                                                      "[secret-service \"*\" attribute \"server=*.example.org\"]"])
        let schema = try XCTUnwrap(parsed.sections[0].secretService)
        XCTAssertTrue(schema.matches(wifi))
        XCTAssertFalse(schema.matches(["xdg:schema": "org.freedesktop.Secret.Generic"]))
        XCTAssertFalse(schema.matches([:]), "no schema is the empty schema")
        let attribute = try XCTUnwrap(parsed.sections[1].secretService)
        XCTAssertTrue(attribute.matches(wifi))
        XCTAssertFalse(attribute.matches(["server": "example.com"]))
        XCTAssertFalse(attribute.matches(["xdg:schema": "x"]), "an item without the attribute does not match")
        XCTAssertFalse(parsed.sections[0].matches(service: "org.gnome.keyring.NetworkPassword", account: ""),
                       "a [secret-service] section never matches Keygate's own items")
        XCTAssertFalse(parsed.sections[0].isDefault)
    }

    func test_badHeadersAndKeys_areErrorsAtTheirPlace() {
        let cases: [(String, Int, Int, String)] = [
            ("[secret-service \"x\" service \"y\"]\naccess = user-presence\n", 1, 21, "attribute"),
            ("[service \"y\" secret-service \"x\"]\n", 1, 14, "header of its own"),
            ("[secret-service \"x\" attribute \"server\"]\n", 1, 32, "NAME=GLOB"),
            ("[secret-service \"x\" attribute \"=v\"]\n", 1, 32, "NAME=GLOB"),
            ("[secret-service \"x\" attribute \"s*=v\"]\n", 1, 32, "exact text"),
            ("[attribute \"a=b\"]\n", 1, 2, "secret-service"),
            ("[secret-service \"x\"]\nreuse-duration = 5m\n", 2, 1, "only access"),
            ("[secret-service \"x\"]\naccess = user-presence\n[secret-service \"x\"]\n", 3, 1, "duplicate section"),
        ]
        for (text, line, column, word) in cases {
            guard let first = parse(text).errors.first else { XCTFail("no error for:\n\(text)"); continue }
            XCTAssertEqual("\(first.line):\(first.column)", "\(line):\(column)", "\(first.description) for:\n\(text)")
            XCTAssertTrue(first.message.contains(word), "\(first.message) should mention \(word)")
        }
    }

    private func set(_ files: [(PolicyLayer, String)]) throws -> (PolicySet, String) {
        let root = NSTemporaryDirectory() + "kg-ss-policy-\(UUID().uuidString)"
        var folders: [(PolicyLayer, String)] = []
        for (index, (layer, text)) in files.enumerated() {
            let folder = root + "/\(index)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o755])
            try text.write(toFile: folder + "/a.policy", atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder + "/a.policy")
            folders.append((layer, folder))
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        return (PolicySet.load(folders: folders), root)
    }

    func test_noneByDefault_aSectionRaisesIt_theMoreSpecificWins_andAUserOnlyTightens() throws {
        let (empty, r0) = try set([(.admin, "[default]\naccess = user-presence\n")])
        defer { try? FileManager.default.removeItem(atPath: r0) }
        XCTAssertNil(try empty.secretServiceDecision(attributes: wifi).access,
                     "a [default] section of Keygate's own items does not reach clients' items: none, as every provider")
        let (system, r1) = try set([(.admin, """
            [secret-service "*"]
            access = user-presence
            [secret-service "org.gnome.keyring.NetworkPassword" attribute "server=vpn.*"]
            access = biometry-current-set
            """)])
        defer { try? FileManager.default.removeItem(atPath: r1) }
        XCTAssertEqual(try system.secretServiceDecision(attributes: wifi).access, .biometryCurrentSet, "the more specific section")
        XCTAssertEqual(try system.secretServiceDecision(attributes: ["xdg:schema": "other"]).access, .userPresence)
        XCTAssertNil(try system.decision(service: "org.gnome.keyring.NetworkPassword", account: "").defaultAccess,
                     "Keygate's own items never see a [secret-service] section")
        let (withUser, r2) = try set([(.admin, "[secret-service \"*\"]\naccess = user-presence\n"),
                                      (.user, "[secret-service \"*\"]\naccess = none\n[secret-service \"x\"]\naccess = biometry-any\n")])
        defer { try? FileManager.default.removeItem(atPath: r2) }
        XCTAssertEqual(try withUser.secretServiceDecision(attributes: ["xdg:schema": "y"]).access, .userPresence,
                       "a user's `none` does not loosen the system's")
        let tightened = try withUser.secretServiceDecision(attributes: ["xdg:schema": "x"])
        XCTAssertNotNil(tightened.access, tightened.decision.warnings.joined())
        XCTAssertTrue(tightened.access?.contains(.biometryAny) == true, "a user may raise it: \(String(describing: tightened.access))")
    }
}
