// kSecAttrProtocol values. Apple stores a four-character code; Keygate keeps the
// same code so that items and scripts port unchanged.

public struct InternetProtocol: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let http = InternetProtocol(rawValue: "http")
    public static let https = InternetProtocol(rawValue: "htps")
    public static let ftp = InternetProtocol(rawValue: "ftp ")
    public static let ftps = InternetProtocol(rawValue: "ftps")
    public static let ssh = InternetProtocol(rawValue: "ssh ")
    public static let smtp = InternetProtocol(rawValue: "smtp")
    public static let imap = InternetProtocol(rawValue: "imap")
    public static let imaps = InternetProtocol(rawValue: "imps")
    public static let pop3 = InternetProtocol(rawValue: "pop3")
    public static let ldap = InternetProtocol(rawValue: "ldap")
    public static let ldaps = InternetProtocol(rawValue: "ldps")
    public static let socks = InternetProtocol(rawValue: "sox ")
    public static let smb = InternetProtocol(rawValue: "smb ")

    /// Accepts an Apple code ("htps") or a common name ("https").
    public init?(name: String) {
        let table: [String: InternetProtocol] = [
            "http": .http, "https": .https, "htps": .https, "ftp": .ftp, "ftps": .ftps,
            "ssh": .ssh, "smtp": .smtp, "imap": .imap, "imaps": .imaps, "imps": .imaps,
            "pop3": .pop3, "ldap": .ldap, "ldaps": .ldaps, "ldps": .ldaps, "socks": .socks, "smb": .smb,
        ]
        if let known = table[name.lowercased()] { self = known; return }
        guard !name.isEmpty, name.utf8.count <= 4, name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7f }) else { return nil }
        self.init(rawValue: name + String(repeating: " ", count: 4 - name.utf8.count))
    }

    public var description: String { rawValue.trimmingCharacters(in: " ") }
}

extension String {
    func trimmingCharacters(in set: Character) -> String {
        var s = Substring(self)
        while s.first == set { s.removeFirst() }
        while s.last == set { s.removeLast() }
        return String(s)
    }
}
