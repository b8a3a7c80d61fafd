// The object paths keygate-secret-service serves, parsed into a value (pure: no state, no
// bus): the service, a collection by name or by alias, an item of a collection, a session, a
// prompt, and the parent nodes introspection walks. Names are D-Bus path elements
// ([A-Za-z0-9_]); anything else under /org/freedesktop/secrets is `.unknown`.
import Keygate
import KeygateCore

package enum ObjectPath: Hashable, Sendable {
    case service
    case collection(String)
    /// /org/freedesktop/secrets/aliases/NAME: the collection the alias names (libsecret writes to
    /// aliases/default directly).
    case alias(String)
    case item(collection: String, item: String)
    /// An item seen through an alias path.
    case aliasItem(alias: String, item: String)
    case session(String)
    case prompt(String)
    /// A node above the service ("/", "/org", "/org/freedesktop") or a folder of it
    /// ("…/collection", "…/session"): introspectable, with no interface of its own.
    case node(String)
    case unknown(String)

    package static let root = "/org/freedesktop/secrets"

    package init(_ path: String) {
        if path == Self.root { self = .service; return }
        if path == "/" || path == "/org" || path == "/org/freedesktop" { self = .node(path); return }
        guard path.hasPrefix(Self.root + "/") else { self = .unknown(path); return }
        let parts = path.dropFirst(Self.root.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy(Self.isElement) || (parts.count == 1 && ["collection", "aliases", "session", "prompt"].contains(parts[0])) else {
            self = .unknown(path)
            return
        }
        switch (parts.first, parts.count) {
        case ("collection", 1), ("aliases", 1), ("session", 1), ("prompt", 1): self = .node(path)
        case ("collection", 2): self = .collection(parts[1])
        case ("collection", 3): self = .item(collection: parts[1], item: parts[2])
        case ("aliases", 2): self = .alias(parts[1])
        case ("aliases", 3): self = .aliasItem(alias: parts[1], item: parts[2])
        case ("session", 2): self = .session(parts[1])
        case ("prompt", 2): self = .prompt(parts[1])
        default: self = .unknown(path)
        }
    }

    package var path: String {
        switch self {
        case .service: return Self.root
        case .collection(let name): return Self.root + "/collection/" + name
        case .alias(let name): return Self.root + "/aliases/" + name
        case .item(let collection, let item): return Self.root + "/collection/" + collection + "/" + item
        case .aliasItem(let alias, let item): return Self.root + "/aliases/" + alias + "/" + item
        case .session(let id): return Self.root + "/session/" + id
        case .prompt(let id): return Self.root + "/prompt/" + id
        case .node(let path), .unknown(let path): return path
        }
    }

    /// A D-Bus path element: one or more of [A-Za-z0-9_].
    package static func isElement(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
        }
    }
}
