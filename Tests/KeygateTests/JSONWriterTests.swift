// The key files' JSON writer (JSONWriter): it writes, byte for byte, what JSONEncoder wrote with
// `[.prettyPrinted, .sortedKeys]`, so that files written before and after it are the same files:
// the frozen keychain's files are rewritten to their own bytes, and every shape a protector or
// keys.json takes is compared with JSONEncoder's output.
import Foundation
import XCTest
@testable import KeygateCore

final class JSONWriterTests: XCTestCase {
    private func jsonEncoder<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return Array(try encoder.encode(value))
    }

    private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    func test_theFrozenKeychainsFiles_areWrittenAgainToTheirOwnBytes() throws {
        let folder = FormatVectorTests.folder + "/keychain"
        for name in ["login", "recovery", "host"] {
            let path = folder + "/protectors/\(name).json"
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
            XCTAssertEqual(text(try Protector.decode(bytes, path: path).encoded()), text(bytes), name)
        }
        let keysBytes = Array(try Data(contentsOf: URL(fileURLWithPath: folder + "/keys.json")))
        let keys = try XCTUnwrap(try PublicKeys.load(directory: folder))
        XCTAssertEqual(text(keys.encoded()), text(keysBytes))
    }

    func test_everyShapeOfAProtector_isWrittenAsJSONEncoderWritesIt() throws {
        let master = try secureBytes(Sodium.randomBytes(32))
        for round in 0..<64 {
            let kdf: KDFParameters? = round % 4 == 0 ? nil
                : KDFParameters(opsLimit: UInt64(round), memLimitBytes: UInt64(round) << 20,
                                calibratedMilliseconds: round % 3 == 0 ? nil : UInt64(round * 7))
            var protector = try Protector.wrap(masterKey: master, kind: round % 2 == 0 ? Protector.Kind.password : Protector.Kind.recovery,
                                               wrappingKey: try secureBytes(Sodium.randomBytes(32)), salt: Sodium.randomBytes(16), kdf: kdf)
            let gate = WrappedGateKey(publicKey: Base64Text.encode(Sodium.randomBytes(32)), nonce: Base64Text.encode(Sodium.randomBytes(24)),
                                      wrapped: Base64Text.encode(Sodium.randomBytes(48)))
            if round % 5 != 0 { protector.presence = gate }
            if round % 3 != 0 { protector.currentSet = gate }
            XCTAssertEqual(text(protector.encoded()), text(try jsonEncoder(protector)), "round \(round)")
            XCTAssertEqual(try Protector.decode(protector.encoded(), path: "login.json"), protector)
        }
    }

    func test_everyShapeOfKeysJSON_isWrittenAsJSONEncoderWritesIt() throws {
        let names = Accessibility.allCases.map(\.rawValue)
        for round in 0..<(1 << names.count) {
            // Every subset of the classes, with and without seals and Keygate 1.x's two keys.
            let chosen = names.enumerated().filter { round & (1 << $0.offset) != 0 }.map(\.element)
            var keys = PublicKeys(classKeys: Dictionary(uniqueKeysWithValues: chosen.map { ($0, PublicKeys.encodeKey(Sodium.randomBytes(32))) }))
            if round % 2 == 1 { keys.seals = Dictionary(uniqueKeysWithValues: chosen.map { ($0, PublicKeys.encodeKey(Sodium.randomBytes(32))) }) }
            if round % 3 == 0 { keys.presence = PublicKeys.encodeKey(Sodium.randomBytes(32)) }
            if round % 7 == 0 { keys.currentSet = PublicKeys.encodeKey(Sodium.randomBytes(32)) }
            XCTAssertEqual(text(keys.encoded()), text(try jsonEncoder(keys)), "round \(round)")
        }
    }

    /// What the key files never hold but a writer must still get right: escapes, names that
    /// differ only in case, empty and nested objects, the largest numbers.
    func test_stringsNamesAndNumbers_areWrittenAsJSONEncoderWritesThem() throws {
        let strings = ["", "a/b", "q\"b\\s", "\u{08}\u{0C}\n\r\t", "\u{01}\u{1F}\u{7F}", "é🔑", "\u{00}x"]
        let members = Dictionary(uniqueKeysWithValues: strings.enumerated().map { ("k\($0.offset)", $0.element) })
        XCTAssertEqual(text(JSONWriter.pretty(.object(members.mapValues(JSONValue.string)))), text(try jsonEncoder(members)))
        let names = ["b", "B", "a", "A", "ab", "aB", "Ab", "a-b", "a_b", "when-unlocked", "whenUnlocked", "zz", "Z"]
        let byName = Dictionary(uniqueKeysWithValues: names.map { ($0, 1) })
        XCTAssertEqual(text(JSONWriter.pretty(.object(byName.mapValues { .integer(Int64($0)) }))), text(try jsonEncoder(byName)))
        struct Nested: Encodable { var empty: [String: String] = [:]; var inner = ["x": ["y": "z"]]; var big = UInt64.max; var small = Int64.min }
        let nested: JSONValue = .object(["empty": .object([:]), "inner": .object(["x": .object(["y": .string("z")])]),
                                         "big": .unsigned(.max), "small": .integer(.min)])
        XCTAssertEqual(text(JSONWriter.pretty(nested)), text(try jsonEncoder(Nested())))
    }
}
