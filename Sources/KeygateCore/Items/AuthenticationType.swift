// kSecAttrAuthenticationType values, as Apple's four-character codes.

public struct AuthenticationType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let `default` = AuthenticationType(rawValue: "dflt")
    public static let httpBasic = AuthenticationType(rawValue: "http")
    public static let httpDigest = AuthenticationType(rawValue: "httd")
    public static let htmlForm = AuthenticationType(rawValue: "form")
    public static let ntlm = AuthenticationType(rawValue: "ntlm")
    public static let msn = AuthenticationType(rawValue: "msna")
    public static let dpa = AuthenticationType(rawValue: "dpaa")
    public static let rpa = AuthenticationType(rawValue: "rpaa")

    /// Accepts an Apple code ("httd") or a name ("http-digest").
    public init?(name: String) {
        let table: [String: AuthenticationType] = [
            "default": .default, "dflt": .default, "http-basic": .httpBasic, "basic": .httpBasic, "http": .httpBasic,
            "http-digest": .httpDigest, "digest": .httpDigest, "httd": .httpDigest, "form": .htmlForm,
            "html-form": .htmlForm, "ntlm": .ntlm, "msn": .msn, "msna": .msn, "dpa": .dpa, "dpaa": .dpa,
            "rpa": .rpa, "rpaa": .rpa,
        ]
        guard let known = table[name.lowercased()] else { return nil }
        self = known
    }

    public var description: String { rawValue }
}
