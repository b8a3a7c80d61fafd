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
        // A path off the bus is ASCII (sd-bus checks every object path it reads): parsed as
        // bytes, with no grapheme breaking or Unicode comparison. Anything else takes the
        // Character-wise reading below, which gives the same answer for ASCII.
        if let parsed = path.utf8.withContiguousStorageIfAvailable({ Self.parseASCII($0, path) }), let parsed {
            self = parsed
            return
        }
        self.init(characters: path)
    }

    /// The root's bytes; every path below it continues with "/".
    private static let rootBytes = Array(root.utf8)

    /// `path` parsed from its UTF-8 bytes `bytes`; nil when they are not all ASCII.
    private static func parseASCII(_ bytes: UnsafeBufferPointer<UInt8>, _ path: String) -> ObjectPath? {
        guard bytes.allSatisfy({ $0 < 0x80 }) else { return nil }
        let root = rootBytes
        let count = bytes.count
        guard count > root.count, bytes[root.count] == UInt8(ascii: "/"), bytes.prefix(root.count).elementsEqual(root) else {
            if bytes.elementsEqual(root) { return .service }
            if path == "/" || path == "/org" || path == "/org/freedesktop" { return .node(path) }
            return .unknown(path)
        }
        // Up to three elements after the root and its "/"; more is no path of ours.
        var parts: [Range<Int>] = []
        parts.reserveCapacity(3)
        var start = root.count + 1
        for index in start...count where index == count || bytes[index] == UInt8(ascii: "/") {
            guard parts.count < 3 else { return .unknown(path) }
            parts.append(start..<index)
            start = index + 1
        }
        func element(_ range: Range<Int>) -> Bool {
            !range.isEmpty && bytes[range].allSatisfy { b in
                (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
            }
        }
        guard parts.allSatisfy(element) else { return .unknown(path) }
        func text(_ range: Range<Int>) -> String { String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) }
        func named(_ range: Range<Int>, _ name: StaticString) -> Bool {
            UnsafeBufferPointer(rebasing: bytes[range]).elementsEqual(UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
        }
        let first = parts[0]
        switch parts.count {
        case 1:
            return named(first, "collection") || named(first, "aliases") || named(first, "session") || named(first, "prompt")
                ? .node(path) : .unknown(path)
        case 2:
            if named(first, "collection") { return .collection(text(parts[1])) }
            if named(first, "aliases") { return .alias(text(parts[1])) }
            if named(first, "session") { return .session(text(parts[1])) }
            if named(first, "prompt") { return .prompt(text(parts[1])) }
            return .unknown(path)
        default:
            if named(first, "collection") { return .item(collection: text(parts[1]), item: text(parts[2])) }
            if named(first, "aliases") { return .aliasItem(alias: text(parts[1]), item: text(parts[2])) }
            return .unknown(path)
        }
    }

    /// The same parse, a Character at a time (a path that is not ASCII: never one off the bus).
    package init(characters path: String) {
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
        case .collection(let name): return Self.joined("/collection/", name)
        case .alias(let name): return Self.joined("/aliases/", name)
        case .item(let collection, let item): return Self.joined("/collection/", collection, item)
        case .aliasItem(let alias, let item): return Self.joined("/aliases/", alias, item)
        case .session(let id): return Self.joined("/session/", id)
        case .prompt(let id): return Self.joined("/prompt/", id)
        case .node(let path), .unknown(let path): return path
        }
    }

    /// The root, `folder`, `name` and (when given) "/" and `item`, written into one string of
    /// the right size: every reply of a lookup names an item and its session.
    private static func joined(_ folder: String, _ name: String, _ item: String? = nil) -> String {
        var out = ""
        out.reserveCapacity(root.utf8.count + folder.utf8.count + name.utf8.count + (item.map { $0.utf8.count + 1 } ?? 0))
        out.append(root)
        out.append(folder)
        out.append(name)
        if let item {
            out.append("/")
            out.append(item)
        }
        return out
    }

    /// A D-Bus path element: one or more of [A-Za-z0-9_].
    package static func isElement(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { b in
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
        }
    }
}
