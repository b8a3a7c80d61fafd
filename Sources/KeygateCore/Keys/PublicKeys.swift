// The public halves of the keys gated items are sealed to: <dir>/keys.json (0600,
// written atomically by AtomicFile). Reading it needs no unlock, so adding an
// access-controlled item never prompts. The class pairs' private halves are derived
// (ClassKeys); each class key carries the gatekeeper's seal, without which the
// gatekeeper gives no gate key to seal beside it (docs/GATEKEEPER.md). `presence` and
// `currentSet` are Keygate 1.x's gate keys, read for migration only.
/// Public halves, readable without any unlock: <dir>/keys.json (0600, atomic writes).
package struct PublicKeys: Codable, Sendable, Equatable {
    static let currentVersion = 1
    static let fileName = "keys.json"
    static let maxBytes = 64 * 1024

    var version: Int
    var classKeys: [String: String]     // Accessibility.rawValue -> base64 public key (this-device-only ones only when known)
    var presence: String?               // base64 (1.x)
    var currentSet: String?             // base64 (1.x)
    /// Accessibility.rawValue -> base64 of the gatekeeper's seal on that class key.
    var seals: [String: String]?

    init(version: Int = PublicKeys.currentVersion, classKeys: [String: String] = [:], presence: String? = nil, currentSet: String? = nil) {
        self.version = version
        self.classKeys = classKeys
        self.presence = presence
        self.currentSet = currentSet
    }

    private init(_ members: KeyFileJSON.Members) throws(KeyFileJSON.Malformed) {
        guard let classKeys = try members.optionalStringMap("classKeys") else { throw KeyFileJSON.Malformed(message: "no classKeys") }
        self.init(version: try members.int("version"), classKeys: classKeys, presence: try members.optionalString("presence"),
                  currentSet: try members.optionalString("currentSet"))
        seals = try members.optionalStringMap("seals")
    }

    package func seal(_ a: Accessibility) -> [UInt8] {
        guard let text = seals?[a.rawValue], let bytes = Base64Text.decode(text), bytes.count == Self.sealBytes else { return [] }
        return bytes
    }

    /// The length of the gatekeeper's seal on a class public key (GateSecrets.sealBytes).
    package static let sealBytes = 32

    static func path(directory: String) -> String { directory + "/" + fileName }

    /// nil if absent; .decode on garbage, on a future format, or on a key that is not 32 bytes.
    package static func load(directory: String) throws -> PublicKeys? {
        let path = path(directory: directory)
        guard let bytes = try AtomicFile.read(path, maxBytes: maxBytes) else { return nil }
        // By hand (KeyFileJSON), as Codable would read it: every login reads keys.json.
        guard let document = try? KeyFileJSON.parse(bytes), let members = try? KeyFileJSON.Members(document),
              let version = try? members.int("version") else {
            throw corrupt(path)
        }
        guard version <= currentVersion else {
            throw KeychainError.decode("""
                \(path) was written by a newer Keygate (format \(version); this one reads format \(currentVersion)): upgrade \
                keygate
                """)
        }
        guard version >= 1, let keys = try? PublicKeys(members) else { throw corrupt(path) }
        for encoded in Array(keys.classKeys.values) + [keys.presence, keys.currentSet].compactMap({ $0 }) {
            guard decodeKey(encoded) != nil else { throw corrupt(path) }
        }
        return keys
    }

    func save(directory: String) throws {
        try PrivateDirectory.make(directory)
        try AtomicFile.write(encoded(), to: Self.path(directory: directory), mode: 0o600)
    }

    /// The file's bytes, as JSONEncoder wrote them (`[.prettyPrinted, .sortedKeys]`; JSONWriter).
    func encoded() -> [UInt8] {
        var members: [String: JSONValue] = ["version": .integer(Int64(version)), "classKeys": .object(classKeys.mapValues(JSONValue.string))]
        if let presence { members["presence"] = .string(presence) }
        if let currentSet { members["currentSet"] = .string(currentSet) }
        if let seals { members["seals"] = .object(seals.mapValues(JSONValue.string)) }
        return JSONWriter.pretty(.object(members))
    }

    package func classKey(_ a: Accessibility) -> [UInt8]? { classKeys[a.rawValue].flatMap(Self.decodeKey) }
    package var presenceKey: [UInt8]? { presence.flatMap(Self.decodeKey) }
    package var currentSetKey: [UInt8]? { currentSet.flatMap(Self.decodeKey) }

    static func encodeKey(_ key: [UInt8]) -> String { Base64Text.encode(key) }

    private static func decodeKey(_ text: String) -> [UInt8]? {
        guard let bytes = Base64Text.decode(text), bytes.count == BoxKeyPair.publicKeyBytes else { return nil }
        return bytes
    }

    private static func corrupt(_ path: String) -> KeychainError {
        .decode("\(path) is not a valid Keygate public-key file (corrupt or truncated): delete it; the next `keygate unlock` writes it again")
    }
}
