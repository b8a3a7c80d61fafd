// How keygate-secret-service names an item in an object path: Keygate's own items (the CLI's
// and the library's) by their row in the embedded store ("k12"), items Secret Service clients
// made by theirs ("i7"), and the in-memory `session` collection's by a counter ("m3"). Rows are
// stable for an item's life: a replacement keeps its row. Pure.
import Keygate
import KeygateCore

package enum ItemRef: Hashable, Sendable {
    case keygate(Int64)
    case client(Int64)
    case memory(Int64)

    package init?(element: String) {
        guard let first = element.first, let number = Int64(element.dropFirst()), number > 0,
              String(number) == String(element.dropFirst()) else { return nil }
        switch first {
        case "k": self = .keygate(number)
        case "i": self = .client(number)
        case "m": self = .memory(number)
        default: return nil
        }
    }

    package var element: String {
        switch self {
        case .keygate(let n): return "k\(n)"
        case .client(let n): return "i\(n)"
        case .memory(let n): return "m\(n)"
        }
    }
}

/// The collections every keychain has.
package enum CollectionName {
    /// The keychain itself: Keygate's items and the ones clients keep there. Aliases `default` and `login`.
    package static let login = "login"
    /// In memory only, gone when the daemon stops.
    package static let session = "session"
}
