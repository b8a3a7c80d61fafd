// The values of the Secret Service's D-Bus messages, as plain Swift: a reply read out of an
// sd-bus message (BusMessage.read) and the arguments a call writes (BusMessage.append). The
// builders in `Variant` name the D-Bus types the Secret Service API uses; the accessors read
// what Keygate needs from a reply ("" or nil for a value of another type: a reply of an
// unexpected shape is never trapped on).
import KeygateCore

/// One D-Bus value.
package indirect enum BusValue: Sendable {
    case string(String)
    case objectPath(String)
    case boolean(Bool)
    case uint32(UInt32)
    case uint64(UInt64)
    /// An "ay" (binary-safe: NULs and all).
    case bytes([UInt8])
    /// An array of `element` (its signature: "{ss}", "o", "{sv}"), which types it even when empty.
    case array(element: String, [BusValue])
    case dictEntry(BusValue, BusValue)
    /// A struct, or a message's arguments.
    case tuple([BusValue])
    case variant(BusValue)
    /// A value of a type Keygate never reads, by its signature (read past, kept for its type).
    case other(String)
    /// An "a{ss}" as a reply carries it (an item's attributes): read straight into a dictionary,
    /// one entry after another, where a tree of entries costs a box per key and per value.
    case stringMap([String: String])

    /// The value's D-Bus signature, e.g. "a{ss}".
    package var signature: String {
        var out = ""
        appendSignature(to: &out)
        return out
    }

    /// Appends this value's signature to `out` (one string for a whole container's contents,
    /// which stays inline for the short signatures the Secret Service uses).
    package func appendSignature(to out: inout String) {
        switch self {
        case .string: out.append("s")
        case .objectPath: out.append("o")
        case .boolean: out.append("b")
        case .uint32: out.append("u")
        case .uint64: out.append("t")
        case .bytes: out.append("ay")
        case .array(let element, _):
            out.append("a")
            out.append(element)
        case .dictEntry(let key, let value):
            out.append("{")
            key.appendSignature(to: &out)
            value.appendSignature(to: &out)
            out.append("}")
        case .tuple(let children):
            out.append("(")
            for child in children { child.appendSignature(to: &out) }
            out.append(")")
        case .variant: out.append("v")
        case .other(let signature): out.append(signature)
        case .stringMap: out.append("a{ss}")
        }
    }

    /// The children of a struct, an array or a dictionary entry; none for any other value.
    package var children: [BusValue] {
        switch self {
        case .tuple(let children), .array(_, let children): return children
        case .dictEntry(let key, let value): return [key, value]
        case .stringMap(let entries): return Variant.stringDictionary(entries).children
        default: return []
        }
    }

    package var childCount: Int { children.count }

    /// Child `index` of a struct, array or dictionary entry.
    package func child(_ index: Int) -> BusValue? {
        let all = children
        return index >= 0 && index < all.count ? all[index] : nil
    }

    /// A string or object path; "" for any other type.
    package var string: String {
        switch self {
        case .string(let text), .objectPath(let text): return text
        default: return ""
        }
    }

    package var boolean: Bool? { if case .boolean(let value) = self { return value } else { return nil } }

    package var uint64: UInt64? { if case .uint64(let value) = self { return value } else { return nil } }

    package var uint32: UInt32? { if case .uint32(let value) = self { return value } else { return nil } }

    /// The value inside a "v".
    package var unboxed: BusValue? { if case .variant(let inner) = self { return inner } else { return nil } }

    /// The bytes of an "ay".
    package var bytes: [UInt8] { if case .bytes(let bytes) = self { return bytes } else { return [] } }

    /// The strings of an "ao" or "as".
    package var strings: [String] { children.map { $0.string } }

    /// An "a{ss}" as a dictionary.
    package var stringDictionary: [String: String] {
        if case .stringMap(let entries) = self { return entries }
        var out: [String: String] = [:]
        for entry in children {
            guard case .dictEntry(let key, let value) = entry else { continue }
            out[key.string] = value.string
        }
        return out
    }

    /// The value of `key` in an "a{sv}" (already unboxed), or nil.
    package func lookup(_ key: String) -> BusValue? {
        guard case .array("{sv}", let entries) = self else { return nil }
        for entry in entries {
            if case .dictEntry(let name, let value) = entry, name.string == key { return value.unboxed }
        }
        return nil
    }
}

/// Builders, named after the D-Bus types the Secret Service API uses.
package enum Variant {
    package static func string(_ value: String) -> BusValue { .string(value) }

    /// An object path; "/" when `path` is not a valid D-Bus object path (sd-bus would refuse it).
    package static func objectPath(_ path: String) -> BusValue { .objectPath(isObjectPath(path) ? path : "/") }

    package static func boolean(_ value: Bool) -> BusValue { .boolean(value) }

    package static func boxed(_ value: BusValue) -> BusValue { .variant(value) }

    package static func tuple(_ children: [BusValue]) -> BusValue { .tuple(children) }

    package static func array(of elementType: String, _ children: [BusValue]) -> BusValue { .array(element: elementType, children) }

    package static func dictEntry(_ key: BusValue, _ value: BusValue) -> BusValue { .dictEntry(key, value) }

    /// An "a{ss}" (attributes), sorted by key.
    package static func stringDictionary(_ entries: [String: String]) -> BusValue {
        array(of: "{ss}", entries.sorted { $0.key < $1.key }.map { dictEntry(string($0.key), string($0.value)) })
    }

    /// An "ao".
    package static func objectPaths(_ paths: [String]) -> BusValue { array(of: "o", paths.map(objectPath)) }

    /// An "ay" holding a copy of `bytes`.
    package static func bytes(_ bytes: [UInt8]) -> BusValue { .bytes(bytes) }

    /// D-Bus's object path grammar: "/", or "/" followed by elements of [A-Za-z0-9_] separated
    /// by single slashes, with no trailing slash.
    package static func isObjectPath(_ path: String) -> Bool {
        // Checked over the string's own bytes: a lookup's reply checks each path it names.
        if let valid = path.utf8.withContiguousStorageIfAvailable(isObjectPath) { return valid }
        return Array(path.utf8).withUnsafeBufferPointer(isObjectPath)
    }

    private static func isObjectPath(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
                continue
            }
            previousWasSlash = false
            let ok = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == UInt8(ascii: "_")
            if !ok { return false }
        }
        return !previousWasSlash
    }
}
