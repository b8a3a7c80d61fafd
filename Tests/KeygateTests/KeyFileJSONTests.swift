// The keychain files' JSON reader (KeyFileJSON): it reads what JSONEncoder writes, reads a
// protector and keys.json as JSONDecoder did (the same value, or both refuse), and refuses
// malformed documents with a message instead of guessing.
import Foundation
import XCTest
@testable import KeygateCore

final class KeyFileJSONTests: XCTestCase {
    private func parse(_ text: String) throws -> KeyFileJSON.Value { try KeyFileJSON.parse(Array(text.utf8)) }

    func test_parse_readsEveryKindOfValue_andEveryEscape() throws {
        let value = try parse(#" {"a" : [1, -2, 0, true, false, null, {}], "s": "q\"b\\s\/n\n\t\r\b\f\u00e9\ud83d\udd11x"} "#)
        XCTAssertEqual(value, .object([
            "a": .array([.integer(1), .integer(-2), .integer(0), .bool(true), .bool(false), .null, .object([:])]),
            "s": .string("q\"b\\s/n\n\t\r\u{08}\u{0C}é🔑x"),
        ]))
        XCTAssertEqual(try parse("9223372036854775807"), .integer(Int64.max))
        XCTAssertEqual(try parse("-9223372036854775808"), .integer(Int64.min))
        XCTAssertEqual(try parse("\"h\u{00e9}\""), .string("hé"))
    }

    func test_parse_refusesMalformedDocuments_sayingWhere() throws {
        let cases: [(String, String)] = [
            ("", "end of input"), ("{", "a member name expected"), (#"{"a":1"#, "end of input in an object"),
            (#"{"a":1,"a":2}"#, "the member a twice"), (#"{"a":1} x"#, "text after the document"),
            ("01", "leading zero"), ("1.5", "not an integer"), ("1e3", "not an integer"), ("-", "a digit expected"),
            ("9223372036854775808", "too large"), ("99999999999999999999", "too large"),
            (#""\ud800""#, "lone surrogate"), (#""\udc00""#, "lone surrogate"), (#""\q""#, "unknown escape"),
            ("\"a\nb\"", "control character"), ("tru", "truncated literal"), ("nul!", "unknown literal"),
            (#"{'a':1}"#, "a member name expected"), ("[1 2]", "',' or ']' expected"),
            (String(repeating: "[", count: 40) + String(repeating: "]", count: 40), "nesting deeper than 32"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try parse(text), text) { error in
                let message = (error as? KeyFileJSON.Malformed)?.message ?? "\(error)"
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
            }
        }
        XCTAssertThrowsError(try KeyFileJSON.parse([0x22, 0xC3, 0x28, 0x22])) { error in
            XCTAssertTrue((error as? KeyFileJSON.Malformed)?.message.contains("not UTF-8") ?? false, "\(error)")
        }
        XCTAssertNoThrow(try parse(String(repeating: "[", count: 31) + String(repeating: "]", count: 31)))
    }

    func test_aProtectorAndKeysJSON_asWrittenByJSONEncoder_readBackEqual() throws {
        let master = try secureBytes(Sodium.randomBytes(32))
        let kdf = KDFParameters(opsLimit: 3, memLimitBytes: 64 << 20, calibratedMilliseconds: 412)
        var protector = try Protector.wrap(masterKey: master, kind: Protector.Kind.password, wrappingKey: try secureBytes(Sodium.randomBytes(32)),
                                           salt: Sodium.randomBytes(16), kdf: kdf)
        // Base64 with '/' (escaped as \/ by JSONEncoder) in every field that can hold one.
        protector.presence = WrappedGateKey(publicKey: "ab/+", nonce: "//8=", wrapped: "a/b/")
        let bytes = protector.encoded()
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).contains(#"\/"#))
        XCTAssertEqual(try Protector.decode(bytes, path: "login.json"), protector)

        let folder = try makeTemporaryFolder(self)
        var keys = PublicKeys(classKeys: [Accessibility.whenUnlocked.rawValue: PublicKeys.encodeKey(Sodium.randomBytes(32)),
                                          Accessibility.afterFirstUnlock.rawValue: PublicKeys.encodeKey(Sodium.randomBytes(32))])
        keys.seals = [Accessibility.whenUnlocked.rawValue: PublicKeys.encodeKey(Sodium.randomBytes(32))]
        try keys.save(directory: folder)
        XCTAssertEqual(try PublicKeys.load(directory: folder), keys)
    }

    /// Variants of a protector file: the reader must agree with JSONDecoder on each (same value, or both refuse).
    func test_protectorFiles_readAsJSONDecoderReadThem() throws {
        let kdf = #""kdf":{"algorithm":"argon2id13","memLimitBytes":67108864,"opsLimit":2}"#
        let id = String(repeating: "a", count: 32)
        let base = #""kind":"password","masterKeyID":"\#(id)","nonce":"bm9uY2U=","salt":"c2FsdA==","wrapped":"d3JhcHBlZA==""#
        let gate = #"{"publicKey":"cGs=","nonce":"bg==","wrapped":"dw=="}"#
        let variants = [
            "{\(kdf),\(base),\"version\":1}",
            "{\(base),\"version\":1}",                                                 // no kdf (a recovery protector)
            "{\"kdf\":null,\(base),\"version\":1}",                                    // null optional
            "{\(kdf),\(base),\"version\":1,\"presence\":\(gate),\"currentSet\":\(gate)}",
            "{\(kdf),\(base),\"version\":1,\"future\":[1,{\"x\":null}],\"more\":\"y\"}", // unknown members
            "{\(kdf),\(base)}",                                                        // no version
            "{\(kdf),\(base),\"version\":\"1\"}",                                      // version of another type
            "{\(kdf),\(base),\"version\":0}",
            "{\(kdf),\"kind\":\"password\",\"version\":1}",                            // required members missing
            "{\"kdf\":{\"algorithm\":\"argon2id13\",\"opsLimit\":-1,\"memLimitBytes\":1},\(base),\"version\":1}",
            "{\"kdf\":{\"algorithm\":\"argon2id13\",\"opsLimit\":2},\(base),\"version\":1}",
            "{\"kdf\":{\"algorithm\":\"argon2id13\",\"opsLimit\":2,\"memLimitBytes\":1,\"calibratedMilliseconds\":5},\(base),\"version\":1}",
            "{\(kdf),\(base),\"version\":1,\"presence\":{\"publicKey\":\"cGs=\"}}",
            "{\(kdf),\(base),\"version\":1,\"presence\":\"x\"}",
            "{\(kdf),\"kind\":\"password\",\"masterKeyID\":\"short\",\"nonce\":\"\",\"salt\":\"\",\"wrapped\":\"\",\"version\":1}",
            "{\(kdf),\(base),\"version\":1,\"kind\":\"again\"}",                         // duplicate: refused by both readers' callers
            "[]", "{}", "null",
        ]
        for text in variants {
            let old = try? JSONDecoder().decode(Protector.self, from: Data(text.utf8))
            let new = try? Protector.decode(Array(text.utf8), path: "p.json")
            if text.contains("\"again\"") {
                // JSONDecoder keeps the first of the two; this reader refuses the file (DECISIONS.md).
                XCTAssertEqual(old?.kind, "password", text)
                XCTAssertNil(new, "a duplicate member is refused: \(text)")
                continue
            }
            XCTAssertEqual(new, old.flatMap { $0.version >= 1 && $0.masterKeyID.count == 32 ? $0 : nil }, text)
        }
    }

    func test_keysJSONFiles_readAsJSONDecoderReadThem() throws {
        let key = PublicKeys.encodeKey([UInt8](repeating: 7, count: 32))
        let variants = [
            #"{"version":1,"classKeys":{"when-unlocked":"\#(key)"}}"#,
            #"{"version":1,"classKeys":{}, "seals":{"when-unlocked":"\#(key)"}}"#,
            #"{"version":1,"classKeys":{},"seals":null,"presence":null}"#,
            #"{"version":1,"classKeys":{},"presence":"\#(key)","currentSet":"\#(key)","next":{"a":[]}}"#,
            #"{"version":1}"#,
            #"{"version":1,"classKeys":{"when-unlocked":1}}"#,
            #"{"version":1,"classKeys":[]}"#,
            #"{"version":1,"classKeys":{},"seals":{"when-unlocked":null}}"#,
            #"{"classKeys":{}}"#,
        ]
        let folder = try makeTemporaryFolder(self)
        for text in variants {
            let old = try? JSONDecoder().decode(PublicKeys.self, from: Data(text.utf8))
            try AtomicFile.write(Array(text.utf8), to: PublicKeys.path(directory: folder), mode: 0o600)
            let new = try? PublicKeys.load(directory: folder)
            XCTAssertEqual(new, old, text)
        }
    }
}
