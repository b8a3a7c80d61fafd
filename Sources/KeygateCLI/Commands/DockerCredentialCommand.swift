// `keygate docker-credential store|get|erase|list|version`: the docker-credential-
// helpers protocol, installed as `docker-credential-keygate` (a wrapper that execs
// this verb), selected with "credsStore": "keygate" in ~/.docker/config.json.
// Input and output follow the published helper library (credentials/credentials.go):
// store reads {"ServerURL","Username","Secret"} JSON, get and erase read the server
// URL, get answers that JSON and list {"URL":"username",…}, each with a final
// newline; any failure is one line on STANDARD OUTPUT and exit 1, and a missing
// credential is the exact text "credentials not found in native keychain", which
// docker recognises. Credentials are internet passwords labelled "Docker
// Credentials" (the label the upstream helpers use), with the exact ServerURL in the
// comment; JSON is DockerCredentialJSON's, storage KeychainOperations'.
import Keygate

enum DockerCredentialCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "docker-credential",
        abstract: "docker's credential helper (docker-credential-keygate): store, get, erase, list, version.",
        discussion: """
            Set it up with \"credsStore\": \"keygate\" in ~/.docker/config.json. store reads \
            {\"ServerURL\",\"Username\",\"Secret\"} JSON on standard input; get and erase read a server URL; list prints \
            {\"URL\":\"username\"}. Errors are one line on standard output and exit 1, as docker expects.
            """,
        usage: "store|get|erase|list|version",
        options: GlobalOptions.all,
        positionals: [PositionalSpec(name: "action", help: "store, get, erase, list or version.", optional: true, variadic: true)])

    static let label = "Docker Credentials"
    static let notFound = "credentials not found in native keychain"
    struct HelperFailure: Error { let message: String }

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        do {
            let actions = args.positionalValues("action")
            guard actions.count == 1, let action = actions.first else {
                throw HelperFailure(message: "Usage: docker-credential-keygate <store|get|erase|list|version>")
            }
            switch action {
            case "store": try store(context)
            case "get": try get(context)
            case "erase": try erase(context)
            case "list": try list(context)
            case "version": try HelperIO.write(1, "docker-credential-keygate (keygate) \(KeygateMain.version)\n")
            default: throw HelperFailure(message: "Unknown credential action `\(action)`")
            }
            return 0
        } catch let failure as HelperFailure {
            try? HelperIO.write(1, failure.message + "\n")
        } catch let error as KeychainError {
            try? HelperIO.write(1, (error.code == .itemNotFound ? notFound : "keygate: " + error.message) + "\n")
        } catch let malformed as DockerCredentialJSON.Malformed {
            try? HelperIO.write(1, malformed.message + "\n")
        }
        return 1
    }

    /// Standard input, lines joined without their newlines (as the Go library scans it).
    private static func input() throws -> SecureBytes {
        let raw = try SecureBytes.read(fileDescriptor: 0, maxBytes: 64 * 1024)
        return try raw.withUnsafeBytes { bytes in
            var joined: [UInt8] = []
            joined.reserveCapacity(bytes.count)
            for line in HelperIO.lines(bytes) { joined.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[line])) }
            return try SecureBytes(consuming: &joined)
        }
    }

    /// The server URL get and erase read, spaces trimmed.
    private static func serverURL() throws -> String {
        let text = try input().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        let trimmed = String(text.drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
        guard !trimmed.isEmpty else { throw HelperFailure(message: "no credentials server URL") }
        return trimmed
    }

    private static func store(_ context: CommandContext) throws {
        var fields = try input().withUnsafeBytes { try DockerCredentialJSON.decodeObject($0) }
        let url = String(decoding: fields["ServerURL"] ?? [], as: UTF8.self)
        let username = String(decoding: fields["Username"] ?? [], as: UTF8.self)
        var secretBytes = fields.removeValue(forKey: "Secret") ?? []
        let secret = try SecureBytes(consuming: &secretBytes)
        guard !url.isEmpty else { throw HelperFailure(message: "no credentials server URL") }
        guard !username.isEmpty else { throw HelperFailure(message: "no credentials username") }
        try ItemOptions.checkName(url, "server URL"); try ItemOptions.checkName(username, "username")
        let identity = identity(url: url, username: username)
        let operations = try context.operations(reason: "docker credentials for \(url)")
        // docker asks for credentials from builds, compose and CI as often as at a terminal, and
        // its macOS helper never prompts: a new credential has no access control, a replaced one
        // keeps its own (docs/INTEGRATIONS.md; a policy's minimum-access gates them).
        let access = try AccessChoice.resolve(nil, identity: identity, replace: true, operations: operations,
                                              toolDefault: (nil, "docker's default")).0
        try operations.add(ItemAttributes(identity: identity, label: label, comment: url, accessControl: access), secret: secret,
                           replace: true)
        // One credential per server URL: a login under another name replaces the old one.
        for old in try items(url, operations) where old.identity != identity {
            _ = try operations.delete(matching: ItemQuery(exactly: old.identity))
        }
    }

    private static func get(_ context: CommandContext) throws {
        let url = try serverURL()
        let operations = try context.operations(reason: "docker credentials for \(url)")
        guard let item = try items(url, operations).max(by: { $0.modified < $1.modified }),
              let secret = try operations.secret(for: item.identity) else {
            throw HelperFailure(message: notFound)
        }
        var out: [UInt8] = []
        out.reserveCapacity(secret.count * 6 + url.utf8.count * 6 + item.identity.account.utf8.count * 6 + 64)
        out += Array("{\"ServerURL\":".utf8)
        DockerCredentialJSON.appendString(url.utf8, to: &out)
        out += Array(",\"Username\":".utf8)
        DockerCredentialJSON.appendString(item.identity.account.utf8, to: &out)
        out += Array(",\"Secret\":".utf8)
        secret.withUnsafeBytes { DockerCredentialJSON.appendString($0, to: &out) }
        out += Array("}\n".utf8)
        let answer = try SecureBytes(consuming: &out)
        try answer.write(toFileDescriptor: 1)
    }

    private static func erase(_ context: CommandContext) throws {
        let url = try serverURL()
        let operations = try context.operations()
        let found = try items(url, operations)
        guard !found.isEmpty else { throw HelperFailure(message: notFound) }
        for item in found { _ = try operations.delete(matching: ItemQuery(exactly: item.identity)) }
    }

    private static func list(_ context: CommandContext) throws {
        let all = try context.operations().attributes(matching: ItemQuery(itemClass: .internetPassword, label: label))
        var byURL: [String: String] = [:]
        for item in all.sorted(by: { $0.modified < $1.modified }) where item.label == label {
            if let url = item.comment { byURL[url] = item.identity.account }
        }
        var out: [UInt8] = [UInt8(ascii: "{")]
        // Go sorts map keys by their bytes.
        for (n, url) in byURL.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).enumerated() {
            if n > 0 { out.append(UInt8(ascii: ",")) }
            DockerCredentialJSON.appendString(url.utf8, to: &out)
            out.append(UInt8(ascii: ":"))
            DockerCredentialJSON.appendString((byURL[url] ?? "").utf8, to: &out)
        }
        out += Array("}\n".utf8)
        try out.withUnsafeBytes { try HelperIO.write(1, $0) }
    }

    /// Keygate's items for one docker server URL.
    private static func items(_ url: String, _ operations: KeychainOperations) throws -> [ItemAttributes] {
        var query = ItemQuery(itemClass: .internetPassword, label: label)
        query.server = identity(url: url, username: "").server
        return try operations.attributes(matching: query).filter { $0.label == label && $0.comment == url }
    }

    /// "https://host:port/path" → server host, port, protocol https, path "path". No scheme: no protocol.
    static func identity(url: String, username: String) -> ItemIdentity {
        var rest = Substring(url)
        var proto: InternetProtocol?
        let scheme = rest.prefix { $0 != ":" && $0 != "/" }
        if rest.dropFirst(scheme.count).hasPrefix("://") {
            proto = InternetProtocol(name: String(scheme))
            rest = rest.dropFirst(scheme.count + 3)
        }
        let hostPart = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(hostPart.count).drop { $0 == "/" }
        var server = String(hostPart)
        var port: UInt16 = 0
        if let colon = hostPart.lastIndex(of: ":"), let p = UInt16(hostPart[hostPart.index(after: colon)...]) {
            server = String(hostPart[..<colon]); port = p
        }
        return .internet(server: server, account: username, protocol: proto, port: port, path: String(path))
    }
}
