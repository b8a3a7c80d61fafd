// `keygate git-credential get|store|erase`: git's credential helper, installed as
// `git-credential-keygate` (a two-line wrapper that execs this verb), so that
// `git config credential.helper keygate` selects it. Credentials are internet
// passwords (server = host, port, protocol, path, account = username), so `keygate
// list` and find-internet-password see them; a policy on the host gates them.
// The secret stored is the password, followed by "\noauth_refresh_token=TOKEN" when
// git gave a refresh token (as git-credential-libsecret does); password_expiry_utc
// is kept in the item's comment. Parsing is GitCredentialMessage's; storage is
// KeychainOperations'.
//
// git ignores a helper's exit status and output on failure and falls back to asking,
// so every failure here is one line on stderr and a non-zero exit; a credential that
// is not there is an empty answer and exit 0.
import Keygate

enum GitCredentialCommand: KeygateCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "git's credential helper (git-credential-keygate): get, store or erase, on stdin.",
        discussion: """
            Set it up with `git config --global credential.helper keygate`. git writes protocol=, host=, path=, username=, \
            password= lines on standard input; `get` answers with username= and password= (and password_expiry_utc=, \
            oauth_refresh_token= when stored). Credentials are internet passwords: `keygate list --internet` shows them. \
            Nothing is printed when no credential matches, so git asks as usual.
            """,
        usage: "get|store|erase < key=value lines",
        options: GlobalOptions.all,
        positionals: [PositionalSpec(name: "operation", help: "get, store or erase (git's names); any other is ignored, as git asks.")])

    static let commentPrefix = "git password_expiry_utc="
    static let refreshMarker = Array("\noauth_refresh_token=".utf8)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let operation = args.positional("operation") ?? ""
        guard ["get", "store", "erase"].contains(operation) else { return 0 }
        let input = try SecureBytes.read(fileDescriptor: 0, maxBytes: GitCredentialMessage.maxBytes)
        let message = try GitCredentialMessage(parsing: input)
        guard let query = message.query() else {
            throw KeychainError(.param, "git gave no host: nothing to \(operation)")
        }
        // The prompt comes right after git's own output ("Cloning into …"): it names what is unlocked and
        // whose password opens it, so that nobody types the remote's password there.
        let operations = try context.operations(reason: """
            git asks your keychain for its credential for \(message.host ?? ""): type your login password to unlock it, \
            not the password of \(message.host ?? "the remote")
            """)
        switch operation {
        case "get": return try get(message, query, operations)
        case "store": return try store(message, operations)
        default: return try erase(query, operations)
        }
    }

    private static func get(_ message: GitCredentialMessage, _ query: ItemQuery, _ operations: KeychainOperations) throws -> Int32 {
        let matches = try operations.attributes(matching: query)
        // Without a username, the most recently changed credential for the URL.
        guard let item = matches.max(by: { $0.modified < $1.modified }) else { return 0 }
        guard let secret = try operations.secret(for: item.identity) else { return 0 }
        try HelperIO.write(1, "username=\(item.identity.account)\n")
        try secret.withUnsafeBytes { raw in
            let split = markerIndex(in: raw)
            try HelperIO.write(1, "password=")
            try HelperIO.write(1, UnsafeRawBufferPointer(rebasing: raw[0..<(split ?? raw.count)]))
            try HelperIO.write(1, "\n")
            if let comment = item.comment, comment.hasPrefix(commentPrefix) {
                try HelperIO.write(1, "password_expiry_utc=\(comment.dropFirst(commentPrefix.count))\n")
            }
            if let split {
                try HelperIO.write(1, "oauth_refresh_token=")
                try HelperIO.write(1, UnsafeRawBufferPointer(rebasing: raw[(split + refreshMarker.count)...]))
                try HelperIO.write(1, "\n")
            }
        }
        return 0
    }

    /// Where "\noauth_refresh_token=" starts in a stored secret, if it is there.
    private static func markerIndex(in raw: UnsafeRawBufferPointer) -> Int? {
        guard raw.count >= refreshMarker.count else { return nil }
        for i in 0...(raw.count - refreshMarker.count) where raw[i] == 0x0A {
            if refreshMarker.indices.allSatisfy({ raw[i + $0] == refreshMarker[$0] }) { return i }
        }
        return nil
    }

    private static func store(_ message: GitCredentialMessage, _ operations: KeychainOperations) throws -> Int32 {
        // git sends store only for a credential that worked; one without a
        // username or password is nothing to keep.
        guard let username = message.username, !username.isEmpty, let password = message.password, password.count > 0,
              let (server, port) = message.serverAndPort else { return 0 }
        try ItemOptions.checkName(username, "username"); try ItemOptions.checkName(server, "host")
        let identity = ItemIdentity.internet(server: server, account: username, protocol: message.internetProtocol,
                                             port: port, path: message.path ?? "")
        let url = "\(message.protocol ?? "")://\(message.host ?? "")\(message.path.map { "/" + $0 } ?? "")"
        let comment = message.passwordExpiryUTC.map { commentPrefix + $0 }
        var attributes = ItemAttributes(identity: identity, label: "git: \(url)", comment: comment)
        // git asks at a terminal: a new credential gets the policy's default-access (shipped:
        // user-presence), a replaced one keeps its own (docs/INTEGRATIONS.md).
        attributes.accessControl = try AccessChoice.resolve(nil, identity: identity, replace: true, operations: operations).0
        try operations.add(attributes, secret: try storedSecret(password, message.oauthRefreshToken), replace: true)
        return 0
    }

    /// The password, then "\noauth_refresh_token=TOKEN" when there is a token.
    private static func storedSecret(_ password: SecureBytes, _ token: SecureBytes?) throws -> SecureBytes {
        guard let token else { return password }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(password.count + refreshMarker.count + token.count)
        password.withUnsafeBytes { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: refreshMarker)
        token.withUnsafeBytes { bytes.append(contentsOf: $0) }
        return try SecureBytes(consuming: &bytes)
    }

    private static func erase(_ query: ItemQuery, _ operations: KeychainOperations) throws -> Int32 {
        // Deleting never needs a key, so an erase never prompts. Nothing to erase is fine.
        _ = try operations.delete(matching: query)
        return 0
    }
}
