// GVariant values for the Secret Service's D-Bus messages: building the arguments
// (with GLib's non-variadic g_variant_new_* constructors: Swift cannot call the variadic
// g_variant_new) and reading the replies. GVariantRef owns a reference; the builders in
// `Variant` return floating references that the message (or a parent value) consumes.
internal import CGio

/// Owns one full reference to a GVariant (a reply, or a child of one).
final class GVariantRef {
    let pointer: OpaquePointer

    /// Takes over a full (non-floating) reference.
    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { g_variant_unref(pointer) }

    var childCount: Int { Int(g_variant_n_children(pointer)) }

    /// Child `index` of a tuple, array or dictionary entry.
    func child(_ index: Int) -> GVariantRef? {
        guard index < childCount, let value = g_variant_get_child_value(pointer, gsize(index)) else { return nil }
        return GVariantRef(taking: value)
    }

    var children: [GVariantRef] { (0..<childCount).compactMap { child($0) } }

    /// The value's type string, e.g. "a{ss}".
    var typeString: String { g_variant_get_type_string(pointer).map { String(cString: $0) } ?? "" }

    func isOfType(_ type: String) -> Bool { typeString == type }

    /// A string or object path; "" for any other type.
    var string: String {
        guard isOfType("s") || isOfType("o") else { return "" }
        return g_variant_get_string(pointer, nil).map { String(cString: $0) } ?? ""
    }

    var boolean: Bool? { isOfType("b") ? g_variant_get_boolean(pointer) != 0 : nil }

    var uint64: UInt64? { isOfType("t") ? UInt64(g_variant_get_uint64(pointer)) : nil }

    var uint32: UInt32? { isOfType("u") ? UInt32(g_variant_get_uint32(pointer)) : nil }

    /// The value inside a "v".
    var unboxed: GVariantRef? {
        guard isOfType("v"), let inner = g_variant_get_variant(pointer) else { return nil }
        return GVariantRef(taking: inner)
    }

    /// The bytes of an "ay" (binary-safe: NULs and all).
    var bytes: [UInt8] {
        guard isOfType("ay") else { return [] }
        var count: gsize = 0
        guard let data = g_variant_get_fixed_array(pointer, &count, 1), count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: data, count: Int(count)))
    }

    /// The strings of an "ao" or "as".
    var strings: [String] { children.map(\.string) }

    /// An "a{ss}" as a dictionary (invalid UTF-8 is repaired by String(cString:), never trapped on).
    var stringDictionary: [String: String] {
        var out: [String: String] = [:]
        for entry in children {
            guard let key = entry.child(0), let value = entry.child(1) else { continue }
            out[key.string] = value.string
        }
        return out
    }

    /// The value of `key` in an "a{sv}" (already unboxed), or nil.
    func lookup(_ key: String) -> GVariantRef? {
        guard isOfType("a{sv}"), let value = g_variant_lookup_value(pointer, key, nil) else { return nil }
        return GVariantRef(taking: value)
    }
}

/// Builders. Each returns a floating reference for a parent value or a message to consume.
enum Variant {
    static func string(_ value: String) -> OpaquePointer { g_variant_new_string(value) }

    /// An object path; "/" when `path` is not a valid D-Bus object path (GLib would abort on one).
    static func objectPath(_ path: String) -> OpaquePointer {
        g_variant_new_object_path(g_variant_is_object_path(path) != 0 ? path : "/")
    }

    static func boolean(_ value: Bool) -> OpaquePointer { g_variant_new_boolean(value ? 1 : 0) }

    static func boxed(_ value: OpaquePointer) -> OpaquePointer { g_variant_new_variant(value) }

    static func tuple(_ children: [OpaquePointer]) -> OpaquePointer {
        let items: [OpaquePointer?] = children
        return items.withUnsafeBufferPointer { g_variant_new_tuple($0.baseAddress, gsize($0.count)) }
    }

    /// An array of `elementType` ("{ss}", "o", "{sv}"), which types it even when empty.
    static func array(of elementType: String, _ children: [OpaquePointer]) -> OpaquePointer {
        let type = g_variant_type_new(elementType)
        defer { g_variant_type_free(type) }
        let items: [OpaquePointer?] = children
        return items.withUnsafeBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize($0.count)) }
    }

    static func dictEntry(_ key: OpaquePointer, _ value: OpaquePointer) -> OpaquePointer {
        g_variant_new_dict_entry(key, value)
    }

    /// An "a{ss}" (attributes).
    static func stringDictionary(_ entries: [String: String]) -> OpaquePointer {
        array(of: "{ss}", entries.sorted { $0.key < $1.key }.map { dictEntry(string($0.key), string($0.value)) })
    }

    /// An "ao".
    static func objectPaths(_ paths: [String]) -> OpaquePointer { array(of: "o", paths.map(objectPath)) }

    /// An "ay" holding a copy of `bytes`.
    static func bytes(_ bytes: [UInt8]) -> OpaquePointer {
        let type = g_variant_type_new("y")
        defer { g_variant_type_free(type) }
        return bytes.withUnsafeBufferPointer { buffer in
            // A non-null pointer even when empty.
            let empty: UInt8 = 0
            return withUnsafePointer(to: empty) { fallback in
                g_variant_new_fixed_array(type, UnsafeRawPointer(buffer.baseAddress ?? fallback), gsize(bytes.count), 1)
            }
        }
    }
}
