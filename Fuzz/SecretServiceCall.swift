// Fuzz harness for keygate-secret-service's call decoder (KeygateSecretService/Dispatch): what
// any process on the user's session bus can send the daemon. The bytes become an object path,
// an interface, a member and an argument tree of the D-Bus types the Secret Service uses
// (BusValue); CallDecoder.decode must return one typed call or one typed refusal. Invariants:
// nothing traps; decoding is deterministic; a refusal has an error name and a message; an
// accepted call is within the item limits (attribute count and sizes, secret and label sizes)
// and names the object its path parses to. KEYGATE_FUZZ_MAKE_SEEDS=DIR writes the seed corpus.
@testable import KeygateCore
@testable import KeygateSecretService
@testable import KeygateStorage
import Glibc

enum CallFuzz {
    static let paths = ["/org/freedesktop/secrets", "/org/freedesktop/secrets/collection/login",
                        "/org/freedesktop/secrets/aliases/default", "/org/freedesktop/secrets/collection/login/i1",
                        "/org/freedesktop/secrets/session/s1", "/org/freedesktop/secrets/prompt/p1", "/"]
    static let interfaces = ["", "org.freedesktop.Secret.Service", "org.freedesktop.Secret.Collection", "org.freedesktop.Secret.Item",
                             "org.freedesktop.Secret.Session", "org.freedesktop.Secret.Prompt", "org.freedesktop.DBus.Properties",
                             "org.freedesktop.DBus.Introspectable"]
    static let members = ["OpenSession", "CreateCollection", "SearchItems", "Unlock", "Lock", "GetSecrets", "ReadAlias", "SetAlias",
                          "Delete", "CreateItem", "GetSecret", "SetSecret", "Close", "Prompt", "Dismiss", "Get", "GetAll", "Set",
                          "Introspect"]
    static let keys = ["org.freedesktop.Secret.Item.Label", "org.freedesktop.Secret.Item.Attributes", "org.freedesktop.Secret.Collection.Label"]

    /// A name from `list`, or (for 1 in 8) the input's own string.
    static func pick(_ input: inout FuzzInput, _ list: [String]) -> String {
        let n = input.int(below: list.count + 1)
        return n < list.count ? list[n] : input.string()
    }

    /// A value of the types the Secret Service uses; a length byte of 255 makes a big one.
    static func value(_ input: inout FuzzInput, depth: Int) -> BusValue {
        switch input.int(below: depth > 3 ? 7 : 11) {
        case 0: return .string(input.string())
        case 1: return .objectPath(pick(&input, paths))
        case 2: return .boolean(input.byte() & 1 == 1)
        case 3: return .uint32(input.uint32())
        case 4: return .uint64(UInt64(input.uint32()))
        case 5:
            let chunk = input.chunk()
            return .bytes(chunk.count == 255 ? [UInt8](repeating: 0x41, count: 70_000) : chunk)
        case 6:
            let count = Int(input.byte())
            let entries = (0..<min(count, 80)).map { i -> BusValue in
                .dictEntry(.string("k\(i)"), .string(count > 200 ? String(repeating: "v", count: 5000) : input.string()))
            }
            return .array(element: "{ss}", entries)
        case 7: return .variant(value(&input, depth: depth + 1))
        case 8: return .tuple((0..<input.int(below: 5)).map { _ in value(&input, depth: depth + 1) })
        case 9: return .array(element: "o", (0..<input.int(below: 4)).map { _ in .objectPath(pick(&input, paths)) })
        default:
            return .array(element: "{sv}", (0..<input.int(below: 3)).map { _ in
                .dictEntry(.string(pick(&input, keys)), .variant(value(&input, depth: depth + 1)))
            })
        }
    }

    static func run(_ input: inout FuzzInput) {
        let path = pick(&input, paths), interface = pick(&input, interfaces), member = pick(&input, members)
        let arguments = (0..<input.int(below: 4)).map { _ in value(&input, depth: 0) }
        let signature = input.byte() == 0xff ? input.string() : arguments.map(\.signature).joined()
        let first = CallDecoder.decode(path: path, interface: interface, member: member, signature: signature, arguments: .tuple(arguments))
        let second = CallDecoder.decode(path: path, interface: interface, member: member, signature: signature, arguments: .tuple(arguments))
        switch (first, second) {
        case (.failure(let a), .failure(let b)):
            require(a == b, "the decoder is not deterministic")
            require(!a.errorName.isEmpty && !a.message.isEmpty, "a refusal without a name or message")
            FuzzStats.record(refused: true)
        case (.success(let call), .success(let again)):
            require(call.target == again.target && call.target == ObjectPath(path), "the call names another object than its path")
            FuzzStats.record(refused: false)
            switch call.call {
            case .createItem(let label, let attributes, let secret, _):
                require((label?.utf8.count ?? 0) <= ClientItemLimits.labelBytes, "a label over the limit")
                require((attributes?.count ?? 0) <= ClientItemLimits.attributeCount, "too many attributes")
                require(attributes?.allSatisfy { $0.key.utf8.count <= ClientItemLimits.attributeNameBytes
                    && $0.value.utf8.count <= ClientItemLimits.attributeValueBytes && !$0.key.isEmpty } ?? true, "an attribute over the limits")
                require(secret.value.count <= ClientItemLimits.encryptedSecretBytes, "a secret over the limit")
            case .setSecret(let secret):
                require(secret.value.count <= ClientItemLimits.encryptedSecretBytes, "a secret over the limit")
            case .searchItems(let attributes), .searchCollection(let attributes):
                require(attributes.count <= ClientItemLimits.attributeCount, "too many attributes in a search")
            case .createCollection(let label, _):
                require(label.utf8.count <= ClientItemLimits.labelBytes, "a collection label over the limit")
            default: break
            }
        default:
            require(false, "the decoder is not deterministic")
        }
    }

    /// Seeds: a byte string per call the clients make (the harness reads them back as above).
    static func seeds() -> [(String, [UInt8])] {
        // path, interface, member indexes; then the argument count and values (see `value`).
        [("open-session-plain", [0, 1, 0, 2, 0, 5, 0x70, 0x6c, 0x61, 0x69, 0x6e, 7, 0, 0, 0]),
         ("search-items", [0, 1, 2, 1, 6, 1, 3, 0x61, 0x70, 0x70, 0]),
         ("create-item", [2, 2, 9, 3, 10, 2, 0, 0, 8, 4, 1, 0, 5, 0, 5, 3, 0x61, 0x62, 0x63, 0, 0, 2, 1, 0]),
         ("get-secret", [3, 3, 10, 1, 1, 4, 0]),
         ("get-all", [1, 6, 16, 1, 0, 0]),
         ("introspect", [6, 7, 18, 0, 0])]
    }
}

@_cdecl("LLVMFuzzerInitialize")
public func fuzzSecretServiceInitialize(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> CInt {
    guard let dir = getenv("KEYGATE_FUZZ_MAKE_SEEDS").map({ String(cString: $0) }) else { return 0 }
    for (name, bytes) in CallFuzz.seeds() {
        guard let file = fopen(dir + "/" + name, "wb") else {
            fputs("cannot write \(dir)/\(name)\n", stderr)
            exit(1)
        }
        _ = bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, file) }
        fclose(file)
    }
    exit(0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSecretServiceCall(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    CallFuzz.run(&input)
    return 0
}
