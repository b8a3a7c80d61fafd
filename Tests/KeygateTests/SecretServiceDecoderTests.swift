// keygate-secret-service's pure parts: the call decoder (every method call becomes one typed
// case or a typed refusal, also for random input: it never traps), object paths and item names,
// and the DH session's cryptography checked against an independent implementation, python
// SecretStorage's own (secretstorage.dhcrypto), on the same exchange.
import Foundation
import KeygateTestSupport
import XCTest
@testable import KeygateCore
@testable import KeygateSecretService
@testable import KeygateStorage

final class SecretServiceDecoderTests: XCTestCase {
    private func decode(_ path: String, _ interface: String, _ member: String, _ signature: String,
                        _ arguments: [BusValue]) -> Result<DecodedCall, CallRefusal> {
        CallDecoder.decode(path: path, interface: interface, member: member, signature: signature, arguments: .tuple(arguments))
    }

    func test_aCreateItem_becomesOneTypedCase() throws {
        let properties = Variant.array(of: "{sv}", [
            .dictEntry(.string("org.freedesktop.Secret.Item.Label"), .variant(.string("mail"))),
            .dictEntry(.string("org.freedesktop.Secret.Item.Attributes"), .variant(Variant.stringDictionary(["user": "bob"]))),
        ])
        let secret = BusValue.tuple([.objectPath("/org/freedesktop/secrets/session/s1"), .bytes([]), .bytes([1, 2, 0]), .string("text/plain")])
        let result = decode("/org/freedesktop/secrets/aliases/default", SecretInterface.collection, "CreateItem", "a{sv}(oayays)b",
                            [properties, secret, .boolean(true)])
        guard case .success(let call) = result, case .createItem(let label, let attributes, let wire, let replace) = call.call else {
            return XCTFail("\(result)")
        }
        XCTAssertEqual(call.target, .alias("default"))
        XCTAssertEqual(label, "mail")
        XCTAssertEqual(attributes, ["user": "bob"])
        XCTAssertEqual(wire.value, [1, 2, 0])
        XCTAssertEqual(wire.session, "/org/freedesktop/secrets/session/s1")
        XCTAssertTrue(replace)
    }

    func test_aCallWithNoInterface_isMatchedByItsMember() {
        guard case .success(let call) = decode("/org/freedesktop/secrets", "", "ReadAlias", "s", [.string("default")]),
              case .readAlias("default") = call.call else { return XCTFail("ReadAlias with no interface") }
    }

    func test_refusals_sayWhatIsWrong() {
        let service = "/org/freedesktop/secrets"
        XCTAssertEqual(refusal(decode(service, SecretInterface.service, "SearchItems", "s", [.string("x")])),
                       .invalidArguments("org.freedesktop.Secret.Service.SearchItems takes (a{ss}), not (s)"))
        XCTAssertEqual(refusal(decode(service, SecretInterface.service, "Nope", "", [])),
                       .unknownMethod("org.freedesktop.Secret.Service has no method Nope"))
        XCTAssertEqual(refusal(decode(service, SecretInterface.item, "GetSecret", "o", [.objectPath("/")])),
                       .unknownInterface("/org/freedesktop/secrets has no interface org.freedesktop.Secret.Item"))
        XCTAssertEqual(refusal(decode("/elsewhere", SecretInterface.service, "ReadAlias", "s", [.string("x")])),
                       .unknownObject("no such object: /elsewhere"))
        XCTAssertEqual(refusal(CallDecoder.decode(path: service, interface: "", member: "ReadAlias", signature: "s", arguments: nil)),
                       .invalidArguments("the call's arguments could not be read"))
        let many = Variant.stringDictionary(Dictionary(uniqueKeysWithValues: (0..<65).map { ("a\($0)", "v") }))
        XCTAssertEqual(refusal(decode(service, SecretInterface.service, "SearchItems", "a{ss}", [many])),
                       .invalidArguments("65 attributes; the limit is 64"))
        let huge = BusValue.tuple([.objectPath("/"), .bytes([]), .bytes([UInt8](repeating: 7, count: 70_000)), .string("")])
        guard case .invalidArguments(let text)? = refusal(decode(service + "/collection/login/i1", SecretInterface.item, "SetSecret",
                                                                   "(oayays)", [huge])) else { return XCTFail("a huge secret") }
        XCTAssertTrue(text.contains("the limit is 65536"), text)
        XCTAssertEqual(refusal(decode(service, SecretInterface.service, "SearchItems", "a{ss}",
                                      [Variant.stringDictionary(["": "v"])])), .invalidArguments("an attribute has an empty name"))
    }

    private func refusal(_ result: Result<DecodedCall, CallRefusal>) -> CallRefusal? {
        if case .failure(let refusal) = result { return refusal }
        return nil
    }

    func test_randomCalls_neverTrap_andWhatDecodesIsWithinTheLimits() {
        var rng = SplitMix(seed: 0x5ec7e7)
        let paths = ["/org/freedesktop/secrets", "/org/freedesktop/secrets/collection/login", "/org/freedesktop/secrets/aliases/default",
                     "/org/freedesktop/secrets/collection/login/i1", "/org/freedesktop/secrets/session/s1",
                     "/org/freedesktop/secrets/prompt/p1", "/", "/org", "/org/freedesktop/secrets/collection/", "//", "/x/y",
                     "/org/freedesktop/secrets/collection/a/b/c", ""]
        let interfaces = ["", SecretInterface.service, SecretInterface.collection, SecretInterface.item, SecretInterface.session,
                          SecretInterface.prompt, SecretInterface.properties, SecretInterface.introspectable, "org.example"]
        let members = ["OpenSession", "CreateCollection", "SearchItems", "Unlock", "Lock", "GetSecrets", "ReadAlias", "SetAlias",
                       "Delete", "CreateItem", "GetSecret", "SetSecret", "Close", "Prompt", "Dismiss", "Get", "GetAll", "Set",
                       "Introspect", "X"]
        var decoded = 0
        for _ in 0..<20_000 {
            let arguments = (0..<Int(rng.next() % 4)).map { _ in randomValue(&rng, depth: 0) }
            let signature = arguments.map(\.signature).joined()
            let result = decode(paths[Int(rng.next() % UInt64(paths.count))], interfaces[Int(rng.next() % UInt64(interfaces.count))],
                                members[Int(rng.next() % UInt64(members.count))], signature, arguments)
            guard case .success(let call) = result else { continue }
            decoded += 1
            switch call.call {
            case .createItem(_, let attributes, let secret, _):
                XCTAssertLessThanOrEqual(attributes?.count ?? 0, ClientItemLimits.attributeCount)
                XCTAssertLessThanOrEqual(secret.value.count, ClientItemLimits.encryptedSecretBytes)
            case .searchItems(let attributes), .searchCollection(let attributes):
                XCTAssertLessThanOrEqual(attributes.count, ClientItemLimits.attributeCount)
            default: break
            }
        }
        XCTAssertGreaterThan(decoded, 20, "the random calls reach the decoder's cases, not only its refusals")
    }

    private func randomValue(_ rng: inout SplitMix, depth: Int) -> BusValue {
        switch rng.next() % (depth > 2 ? 6 : 10) {
        case 0: return .string(String(repeating: "a", count: rng.next() % 20 == 0 ? 5000 : Int(rng.next() % 8)))
        case 1: return .objectPath(["/", "/org/freedesktop/secrets/session/s1", "/x"][Int(rng.next() % 3)])
        case 2: return .boolean(rng.next() % 2 == 0)
        case 3: return .uint32(UInt32(truncatingIfNeeded: rng.next()))
        case 4: return .bytes([UInt8](repeating: 1, count: rng.next() % 20 == 0 ? 70_000 : Int(rng.next() % 64)))
        case 5: return .uint64(rng.next())
        case 6:
            let count = rng.next() % 10 == 0 ? 65 : Int(rng.next() % 4)
            return Variant.stringDictionary(Dictionary(uniqueKeysWithValues: (0..<count).map {
                ("k\($0)", String(repeating: "v", count: rng.next() % 20 == 0 ? 5000 : Int(rng.next() % 8)))
            }))
        case 7: return .variant(randomValue(&rng, depth: depth + 1))
        case 8: return .tuple((0..<Int(rng.next() % 5)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            return Variant.array(of: "{sv}", [.dictEntry(.string(["org.freedesktop.Secret.Item.Label", "org.freedesktop.Secret.Item.Attributes",
                                                                  "org.freedesktop.Secret.Collection.Label"][Int(rng.next() % 3)]),
                                                         .variant(randomValue(&rng, depth: depth + 1)))])
        }
    }

    func test_objectPaths_andItemNames_parse() {
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets"), .service)
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets/collection/login/k12"), .item(collection: "login", item: "k12"))
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets/aliases/default/i3"), .aliasItem(alias: "default", item: "i3"))
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets/collection/lo-gin"), .unknown("/org/freedesktop/secrets/collection/lo-gin"))
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets/collection//x"), .unknown("/org/freedesktop/secrets/collection//x"))
        XCTAssertEqual(ObjectPath("/org/freedesktop/secrets/collection"), .node("/org/freedesktop/secrets/collection"))
        for path in ["/org/freedesktop/secrets/session/s4", "/org/freedesktop/secrets/prompt/p9", "/org/freedesktop/secrets/aliases/default"] {
            XCTAssertEqual(ObjectPath(path).path, path)
        }
        XCTAssertEqual(ItemRef(element: "k12"), .keygate(12))
    }

    /// The byte-wise parse (every ASCII path) agrees with the Character-wise one on paths made of
    /// the pieces that decide it: the root, separators, folder names, elements, a bad character,
    /// and non-ASCII text (a combining mark after "/", a Kelvin sign), which takes the Character path.
    func test_objectPaths_parseAlikeAsBytesAndAsCharacters() {
        let pieces = ["/", "/org", "/org/freedesktop", "/org/freedesktop/secrets", "collection", "aliases", "session", "prompt",
                      "login", "k12", "i3", "s1", "a_B9", "lo-gin", "", "\u{301}", "\u{212A}", "x"]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            var path = ["/org/freedesktop/secrets", "/org/freedesktop/secrets/", "/", ""][Int(rng.next() % 4)]
            for _ in 0..<Int(rng.next() % 5) {
                path += pieces[Int(rng.next() % UInt64(pieces.count))]
                if rng.next() % 3 != 0 { path += "/" }
            }
            if rng.next() % 4 == 0, path.hasSuffix("/") { path.removeLast() }
            XCTAssertEqual(ObjectPath(path), ObjectPath(characters: path), path)
        }
        for path in ["/org/freedesktop/secrets", "/org/freedesktop/secrets/", "/org/freedesktop/secrets/collection/login/k12/x",
                     "/org/freedesktop/secrets/session", "/org/freedesktop/secretsX", "/org/freedesktop/secrets/\u{301}x",
                     "/org/freedesktop/secrets/collection/\u{212A}", "/org", "/", "", "/org/freedesktop/secrets/prompt/p1"] {
            XCTAssertEqual(ObjectPath(path), ObjectPath(characters: path), path)
        }
        XCTAssertEqual(ItemRef(element: "i1"), .client(1))
        XCTAssertEqual(ItemRef(element: "m7"), .memory(7))
        for bad in ["k0", "k01", "k-1", "x1", "k", "", "i1a", "k99999999999999999999"] { XCTAssertNil(ItemRef(element: bad), bad) }
    }

    // MARK: the DH session against python SecretStorage's

    func test_theDHExchange_andAES_agreeWithPythonSecretStorage() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"), "/usr/bin/python3 with secretstorage")
        // The client's side in SecretStorage: its private key, the public key it sends.
        let client = try Subprocess.run(["/usr/bin/python3", "-c", """
            from secretstorage.dhcrypto import Session, int_to_bytes
            s = Session()
            print(s.my_private_key); print(int_to_bytes(s.my_public_key).hex())
            """])
        try Requirement.require(client.status == 0, "python3-secretstorage (apt-get install python3-secretstorage): \(client.err)")
        let lines = client.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(lines.count, 2, client.out)
        let clientPrivate = lines[0], clientPublic = hexBytes(lines[1])
        // Ours, with a known private key, so that a second derivation can be compared too.
        let serverPrivate = [UInt8](repeating: 0x5a, count: 128)
        let (serverPublic, key) = try SessionCipher.exchange(clientPublicKey: clientPublic, privateKey: serverPrivate)
        let (again, sameKey) = try SessionCipher.exchange(clientPublicKey: clientPublic, privateKey: serverPrivate)
        XCTAssertEqual(serverPublic, again)
        XCTAssertTrue(key.constantTimeEquals(sameKey))
        XCTAssertEqual(serverPublic.count, 128)
        // SecretStorage derives the AES key from our public key, and encrypts as it does for a client's secret.
        let python = try Subprocess.run(["/usr/bin/python3", "-c", """
            from secretstorage.dhcrypto import Session, DH_PRIME_1024
            from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
            s = Session(); s.my_private_key = \(clientPrivate); s.my_public_key = pow(2, s.my_private_key, DH_PRIME_1024)
            s.set_server_public_key(int.from_bytes(bytes.fromhex("\(hex(serverPublic))"), "big"))
            print(s.aes_key.hex())
            iv = bytes(range(16)); secret = b"secret from python \\x00\\xff"
            pad = 16 - (len(secret) & 15); secret += bytes((pad,) * pad)
            e = Cipher(algorithms.AES(s.aes_key), modes.CBC(iv)).encryptor()
            print((e.update(secret) + e.finalize()).hex())
            """])
        XCTAssertEqual(python.status, 0, python.err)
        let out = python.out.split(separator: "\n").map(String.init)
        XCTAssertEqual(out.first, hex(key.unprotectedCopy()), "the same AES key on both sides")
        let plaintext = try SessionCipher.decrypt(hexBytes(out[1]), iv: Array(0..<16), key: key)
        XCTAssertEqual(plaintext.unprotectedCopy(), Array("secret from python \u{0}".utf8) + [0xff])
        // And what we encrypt, python decrypts.
        let (iv, ciphertext) = try SessionCipher.encrypt(try SecureBytes.random(count: 0), key: key)
        XCTAssertEqual(ciphertext.count, 16, "an empty secret is one block of padding")
        XCTAssertEqual(iv.count, 16)
    }

    func test_theSessionCipher_refusesBadKeysAndBadCiphertext() throws {
        let (_, key) = try SessionCipher.exchange(clientPublicKey: [2])
        XCTAssertEqual(key.count, 16)
        var abc = Array("abc".utf8)
        let (iv, ciphertext) = try SessionCipher.encrypt(try SecureBytes(consuming: &abc), key: key)
        XCTAssertEqual(try SessionCipher.decrypt(ciphertext, iv: iv, key: key).unprotectedCopy(), Array("abc".utf8))
        var flipped = ciphertext
        flipped[flipped.count - 1] ^= 0x01
        XCTAssertThrowsError(try SessionCipher.decrypt(flipped, iv: iv, key: key), "bad padding is refused")
        XCTAssertThrowsError(try SessionCipher.decrypt(Array(ciphertext.dropLast()), iv: iv, key: key))
        XCTAssertThrowsError(try SessionCipher.decrypt(ciphertext, iv: [1, 2], key: key))
        XCTAssertThrowsError(try SessionCipher.decrypt([], iv: iv, key: key))
        for badKey: [UInt8] in [[], [0], [1], SessionCipher.prime, [UInt8](repeating: 0xff, count: 129)] {
            XCTAssertThrowsError(try SessionCipher.exchange(clientPublicKey: badKey), "\(badKey.count) bytes")
        }
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    private func hexBytes(_ text: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex, let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) {
            out.append(UInt8(text[index..<next], radix: 16) ?? 0)
            index = next
        }
        return out
    }
}

/// A small deterministic generator for the random calls (the same run every time).
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
