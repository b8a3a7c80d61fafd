// The two item classes Keygate stores, with Apple's four-letter codes
// (kSecClassGenericPassword = "genp", kSecClassInternetPassword = "inet").

public enum ItemClass: String, Sendable, Hashable, CaseIterable, Codable {
    case genericPassword = "genp"
    case internetPassword = "inet"

    /// The word used by the CLI and in JSON output.
    public var name: String {
        switch self {
        case .genericPassword: return "generic"
        case .internetPassword: return "internet"
        }
    }
}
