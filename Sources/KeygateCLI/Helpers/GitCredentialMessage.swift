// git's credential protocol (gitcredentials(7), "CUSTOM HELPERS"): the key=value
// lines git writes to a helper's stdin, parsed into the fields Keygate stores. The
// secret fields (password, oauth_refresh_token) go straight from the locked input
// buffer into SecureBytes; the others are Strings. Unknown keys are ignored, as
// git asks helpers to do.
import Keygate

struct GitCredentialMessage {
    var `protocol`: String?
    var host: String?
    var path: String?
    var username: String?
    var passwordExpiryUTC: String?
    var password: SecureBytes?
    var oauthRefreshToken: SecureBytes?

    /// The most git sends: a few short lines. More is refused.
    static let maxBytes = 64 * 1024

    init(parsing input: SecureBytes) throws {
        try input.withUnsafeBytes { raw in
            for line in HelperIO.lines(raw) {
                guard let eq = raw[line].firstIndex(of: UInt8(ascii: "=")) else { continue }
                let key = HelperIO.string(raw, line.lowerBound..<eq)
                let value = (eq + 1)..<line.upperBound
                switch key {
                case "protocol": self.protocol = HelperIO.string(raw, value)
                case "host": host = HelperIO.string(raw, value)
                case "path": path = HelperIO.string(raw, value)
                case "username": username = HelperIO.string(raw, value)
                case "password_expiry_utc": passwordExpiryUTC = HelperIO.string(raw, value)
                case "password": password = try HelperIO.secure(raw, value)
                case "oauth_refresh_token": oauthRefreshToken = try HelperIO.secure(raw, value)
                default: continue
                }
            }
        }
    }

    /// host is "name" or "name:port" (git keeps a non-default port in it).
    var serverAndPort: (server: String, port: UInt16)? {
        guard let host, !host.isEmpty else { return nil }
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]"),
           let port = UInt16(host[host.index(after: colon)...]) {
            return (String(host[..<colon]), port)
        }
        return (host, 0)
    }

    /// Keygate's protocol code for git's protocol name (https → htps); nil when unknown.
    var internetProtocol: InternetProtocol? {
        self.protocol.flatMap { InternetProtocol(name: $0) }
    }

    /// The query that finds this credential: server, port, protocol and path exactly,
    /// the account when git named one.
    func query() -> ItemQuery? {
        guard let (server, port) = serverAndPort else { return nil }
        var q = ItemQuery(itemClass: .internetPassword)
        q.server = server
        q.port = port
        q.protocol = internetProtocol
        q.path = path ?? ""
        q.account = username
        return q
    }
}
