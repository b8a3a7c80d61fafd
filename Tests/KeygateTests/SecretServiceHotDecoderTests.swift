// The calls of a lookup (SearchItems, GetSecrets, GetSecret) are read by keygate-secret-service
// straight from their sd-bus message (CallDecoder.decodeHot), and their replies written straight
// into the reply (CallReply.write). Here each call is built as a real sd-bus message on the
// session bus and read both ways: the value-by-value reading and the tree's must give the same
// typed call or the same refusal, and a typed reply written value by value must carry what its
// tree carries. A call of another signature, object or member is left to the tree's decoder.
import Foundation
import KeygateTestSupport
import XCTest
@testable import KeygateCore
@testable import KeygateSecretService
@testable import KeygateStorage

final class SecretServiceHotDecoderTests: XCTestCase {
    private static let root = "/org/freedesktop/secrets"

    private func server() throws -> BusServer {
        try Requirement.require(Requirement.hasSessionBus, "a D-Bus session bus (run under scripts/secret-session)")
        let address = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"] ?? ""
        return try BusServer(address: address)
    }

    /// The call read both ways: (value by value, or nil when left to the tree; the tree's).
    private func bothWays(_ server: BusServer, _ path: String, _ interface: String, _ member: String, _ arguments: [BusValue])
        -> (Result<DecodedCall, CallRefusal>?, Result<DecodedCall, CallRefusal>)? {
        server.withCall(path: path, interface: interface, member: member, .tuple(arguments)) { call in
            let hot = CallDecoder.decodeHot(path: call.path, interface: call.interface, member: call.member, signature: call.signature,
                                            reader: call.reader)
            let tree = CallDecoder.decode(path: call.path, interface: call.interface, member: call.member, signature: call.signature,
                                          arguments: call.arguments)
            return (hot, tree)
        }
    }

    /// A decoded call in words that do not depend on a dictionary's order.
    private func words(_ result: Result<DecodedCall, CallRefusal>) -> String {
        switch result {
        case .failure(let refusal): return "refused \(refusal.errorName): \(refusal.message)"
        case .success(let decoded):
            let call: String
            switch decoded.call {
            case .searchItems(let attributes): call = "searchItems \(attributes.sorted { $0.key < $1.key })"
            case .searchCollection(let attributes): call = "searchCollection \(attributes.sorted { $0.key < $1.key })"
            case .getSecrets(let items, let session): call = "getSecrets \(items) \(session)"
            case .getSecret(let session): call = "getSecret \(session)"
            default: call = "\(decoded.call)"
            }
            return "\(decoded.target) \(call)"
        }
    }

    private func attributes(_ pairs: [(String, String)]) -> BusValue {
        .array(element: "{ss}", pairs.map { .dictEntry(.string($0.0), .string($0.1)) })
    }

    func test_theCallsOfALookup_readTheSameFromTheMessageAsFromATree() throws {
        let server = try server()
        let service = Self.root, collection = Self.root + "/collection/login", alias = Self.root + "/aliases/default"
        let item = Self.root + "/collection/login/i1", session = Self.root + "/session/s1"
        let many = (0..<65).map { ("a\($0)", "v") }
        let manyWithAnEmptyName = (0..<65).map { ($0 == 3 ? "" : "a\($0)", "v") }
        let searches: [[(String, String)]] = [
            [], [("user", "bob"), ("xdg:schema", "org.example.Password")], [("k", "1"), ("k", "2")],
            (0..<64).map { ("a\($0)", "v") }, many, manyWithAnEmptyName,
            [("ok", "v"), ("", "v")], [("", "v"), (String(repeating: "n", count: 1025), "v")],
            [(String(repeating: "n", count: 1024), String(repeating: "v", count: 4096))],
            [(String(repeating: "n", count: 1025), "v")], [("k", String(repeating: "v", count: 4097))],
            [("ünïcode", String(repeating: "é", count: 2048))], [("ünïcode", String(repeating: "é", count: 2049))],
        ]
        var cases: [(String, String, String, [BusValue])] = []
        for pairs in searches {
            cases.append((service, SecretInterface.service, "SearchItems", [attributes(pairs)]))
            cases.append((service, "", "SearchItems", [attributes(pairs)]))
            cases.append((collection, SecretInterface.collection, "SearchItems", [attributes(pairs)]))
            cases.append((alias, "", "SearchItems", [attributes(pairs)]))
        }
        for items in [[], [item], [item, Self.root + "/collection/login/i999999", "/not/ours", alias + "/i2"]] {
            cases.append((service, SecretInterface.service, "GetSecrets", [Variant.objectPaths(items), .objectPath(session)]))
            cases.append((service, "", "GetSecrets", [Variant.objectPaths(items), .objectPath("/")]))
        }
        cases.append((service, SecretInterface.service, "GetSecrets",
                      [Variant.objectPaths(Array(repeating: "/a", count: ClientItemLimits.objectsPerCall + 1)), .objectPath(session)]))
        for path in [item, alias + "/i7", Self.root + "/collection/login/x1"] {
            cases.append((path, SecretInterface.item, "GetSecret", [.objectPath(session)]))
            cases.append((path, "", "GetSecret", [.objectPath("/")]))
        }
        var readDirectly = 0
        for (path, interface, member, arguments) in cases {
            guard let (hot, tree) = bothWays(server, path, interface, member, arguments) else {
                return XCTFail("sd-bus would not build \(member) on \(path)")
            }
            guard let hot else { return XCTFail("\(interface).\(member) on \(path) was not read straight from the message") }
            readDirectly += 1
            XCTAssertEqual(words(hot), words(tree), "\(interface).\(member) on \(path)")
        }
        XCTAssertEqual(readDirectly, cases.count)
        // The limits hold on this path too: each of these is refused, with the tree's words.
        guard let (over, _) = bothWays(server, service, SecretInterface.service, "SearchItems", [attributes(many)]),
              case .failure(let refusal)? = over else { return XCTFail("65 attributes were not refused") }
        XCTAssertEqual(refusal, .invalidArguments("65 attributes; the limit is 64"))
        guard let (empty, _) = bothWays(server, collection, SecretInterface.collection, "SearchItems", [attributes([("", "v")])]),
              case .failure(let emptyRefusal)? = empty else { return XCTFail("an empty name was not refused") }
        XCTAssertEqual(emptyRefusal, .invalidArguments("an attribute has an empty name"))
    }

    func test_anyOtherCall_isLeftToTheTreesDecoder() throws {
        let server = try server()
        let service = Self.root, item = Self.root + "/collection/login/i1"
        let cases: [(String, String, String, [BusValue])] = [
            (service, SecretInterface.service, "SearchItems", [.string("x")]),
            (service, SecretInterface.service, "SearchItems", []),
            (service, SecretInterface.service, "GetSecrets", [Variant.objectPaths([item])]),
            (item, SecretInterface.item, "GetSecret", [.string("/")]),
            (item, SecretInterface.item, "GetSecret", []),
            (service, SecretInterface.item, "GetSecret", [.objectPath("/")]),
            ("/elsewhere", SecretInterface.service, "SearchItems", [attributes([])]),
            (Self.root + "/session/s1", "", "GetSecret", [.objectPath("/")]),
            (service, SecretInterface.service, "ReadAlias", [.string("default")]),
            (item, SecretInterface.properties, "GetAll", [.string(SecretInterface.item)]),
        ]
        for (path, interface, member, arguments) in cases {
            guard let (hot, tree) = bothWays(server, path, interface, member, arguments) else {
                return XCTFail("sd-bus would not build \(member) on \(path)")
            }
            XCTAssertNil(hot, "\(interface).\(member)(\(arguments.map(\.signature).joined())) on \(path)")
            if member != "ReadAlias" && member != "GetAll" {
                guard case .failure = tree else { return XCTFail("the tree's decoder took \(member) on \(path): \(words(tree))") }
            }
        }
    }

    func test_aReplyWrittenValueByValue_carriesWhatItsTreeCarries() throws {
        let server = try server()
        let session = Self.root + "/session/s1"
        var secretBytes: [UInt8] = Array("s3cret\u{0}bytes".utf8)
        let secret = try SecureBytes(consuming: &secretBytes)
        var plainBytes: [UInt8] = Array("plain\u{0}secret".utf8)
        let plain = try SecureBytes(consuming: &plainBytes)
        let replies: [CallReply] = [
            .itemLists(unlocked: [Self.root + "/collection/login/i1", Self.root + "/collection/login/i2"], locked: []),
            .itemLists(unlocked: [], locked: ["not a path"]),
            .items([Self.root + "/collection/login/i3"]),
            .items([]),
            .secrets([]),
            .secrets([(Self.root + "/collection/login/i1", OutgoingSecret(session: session, value: .plain(plain), contentType: "text/plain")),
                      (Self.root + "/aliases/default/i2", OutgoingSecret(session: session, value: .encrypted(iv: Array(0..<16), ciphertext: Array(16..<48)),
                                                                         contentType: ""))]),
            .secret(OutgoingSecret(session: session, value: .plain(secret), contentType: "application/octet-stream")),
            .secret(OutgoingSecret(session: session, value: .encrypted(iv: [], ciphertext: [1, 2, 3]), contentType: "text/plain")),
        ]
        for reply in replies {
            guard let written = server.written({ reply.write(to: $0) }) else { return XCTFail("sd-bus refused \(reply.busValue)") }
            guard let tree = server.written(reply.busValue) else { return XCTFail("sd-bus refused the tree \(reply.busValue)") }
            XCTAssertEqual(written.signature, reply.busValue.signature)
            XCTAssertEqual("\(written)", "\(tree)")
        }
    }
}

// Each typed reply as the BusValue tree the other writer would send, to compare with what
// `write(to:)` puts in the message. Only the tests make it: the daemon never copies a plain
// secret into a tree.
extension OutgoingSecret {
    var busValue: BusValue {
        switch value {
        case .plain(let secret):
            return .tuple([.objectPath(session), .bytes([]), .bytes(secret.unprotectedCopy()), .string(contentType)])
        case .encrypted(let iv, let ciphertext):
            return .tuple([.objectPath(session), .bytes(iv), .bytes(ciphertext), .string(contentType)])
        }
    }
}

extension CallReply {
    var busValue: BusValue {
        switch self {
        case .value(let value): return value
        case .itemLists(let unlocked, let locked): return .tuple([Variant.objectPaths(unlocked), Variant.objectPaths(locked)])
        case .items(let paths): return .tuple([Variant.objectPaths(paths)])
        case .secrets(let entries):
            return .tuple([Variant.array(of: "{o(oayays)}", entries.map { .dictEntry(.objectPath($0.path), $0.secret.busValue) })])
        case .secret(let secret): return .tuple([secret.busValue])
        }
    }
}
