// Small owners for the GLib/libsecret resources the storage layer holds: each class
// frees its C resource in deinit (g_object_unref, g_hash_table_unref, secret_value_unref,
// secret_schema_unref). GError is copied into a Swift value and freed at once.
internal import CSecret

/// Owns one reference to a GObject (SecretService, SecretCollection, SecretItem, GCancellable).
final class GObjectRef<T>: @unchecked Sendable {
    // @unchecked: GObject reference counting is thread-safe; the pointer never changes.
    let pointer: UnsafeMutablePointer<T>

    /// Takes over a reference the caller owns (a "transfer full" return value).
    init(taking pointer: UnsafeMutablePointer<T>) { self.pointer = pointer }

    deinit { g_object_unref(pointer) }
}

/// Owns a GHashTable of strings to strings (g_strdup'd keys and values, freed with g_free).
final class GStringTable {
    let table: OpaquePointer

    /// A new table holding `entries`.
    init(_ entries: [String: String]) throws {
        guard let table = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free) else {
            throw KeychainError.notAvailable("could not allocate memory for item attributes: free some memory, then try again")
        }
        self.table = table
        for (key, value) in entries {
            g_hash_table_insert(table, g_strdup(key), g_strdup(value))
        }
    }

    /// Takes over a table the caller owns (for example from secret_item_get_attributes).
    init(taking table: OpaquePointer) { self.table = table }

    /// The table's entries as Swift strings (invalid UTF-8 is repaired, never trapped on).
    var entries: [String: String] {
        var out: [String: String] = [:]
        var iter = GHashTableIter()
        g_hash_table_iter_init(&iter, table)
        var key: gpointer?
        var value: gpointer?
        while g_hash_table_iter_next(&iter, &key, &value) != 0 {
            guard let key, let value else { continue }
            out[String(cString: key.assumingMemoryBound(to: CChar.self))] =
                String(cString: value.assumingMemoryBound(to: CChar.self))
        }
        return out
    }

    deinit { g_hash_table_unref(table) }
}

/// Owns a SecretValue (a secret in libsecret's own, non-pageable-when-possible memory).
final class SecretValueRef {
    let value: OpaquePointer

    /// A new value holding a copy of `bytes`, typed application/octet-stream (binary-safe).
    init(copying bytes: [UInt8]) throws {
        let made: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                // A non-null pointer even for an empty blob: libsecret reads `count` bytes from it.
                let empty: CChar = 0
                return withUnsafePointer(to: empty) { fallback in
                    secret_value_new(chars.baseAddress ?? fallback, gssize(bytes.count), "application/octet-stream")
                }
            }
        }
        guard let made else {
            throw KeychainError.notAvailable("could not allocate memory for an item's secret: free some memory, then try again")
        }
        value = made
    }

    init(taking value: OpaquePointer) { self.value = value }

    /// A copy of the value's bytes.
    var bytes: [UInt8] {
        var length: gsize = 0
        guard let data = secret_value_get(value, &length), length > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: Int(length)))
    }

    deinit { secret_value_unref(UnsafeMutableRawPointer(value)) }
}

/// Owns the "io.keygate.Item" schema (made with secret_schema_newv: Swift cannot call the variadic secret_schema_new).
final class SecretSchemaRef: @unchecked Sendable {
    // @unchecked: the schema is immutable after creation and libsecret only reads it.
    let schema: UnsafeMutablePointer<SecretSchema>

    init(name: String, stringAttributes: [String]) throws {
        guard let types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, nil) else {
            throw KeychainError.notAvailable("could not allocate memory for the item schema: free some memory, then try again")
        }
        defer { g_hash_table_unref(types) }
        for attribute in stringAttributes {
            // The value is the attribute type: SECRET_SCHEMA_ATTRIBUTE_STRING, which is 0.
            let type = Int(SECRET_SCHEMA_ATTRIBUTE_STRING.rawValue)
            g_hash_table_insert(types, g_strdup(attribute), UnsafeMutableRawPointer(bitPattern: type))
        }
        // SECRET_SCHEMA_NONE: the schema name is matched, so only Keygate's own items are seen.
        guard let schema = secret_schema_newv(name, SECRET_SCHEMA_NONE, types) else {
            throw KeychainError.notAvailable("could not create the \(name) item schema: check the libsecret installation")
        }
        self.schema = schema
    }

    deinit { secret_schema_unref(schema) }
}

/// A GError copied into Swift: its domain, code and message (with any D-Bus error name removed).
struct GErrorInfo: Sendable {
    let domain: GQuark
    let code: Int32
    let message: String

    /// Copies and frees `error`; nil when there was no error.
    static func take(_ error: UnsafeMutablePointer<GError>?) -> GErrorInfo? {
        guard let error else { return nil }
        defer { g_error_free(error) }
        _ = g_dbus_error_strip_remote_error(error)
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return GErrorInfo(domain: error.pointee.domain, code: error.pointee.code, message: message)
    }

    func `is`(_ domain: GQuark, _ code: UInt32) -> Bool { self.domain == domain && self.code == Int32(bitPattern: code) }
}

/// Takes over a GList of SecretItem references: returns an owner per item and frees the list itself.
func takeItemList(_ list: UnsafeMutablePointer<GList>?) -> [GObjectRef<SecretItem>] {
    var out: [GObjectRef<SecretItem>] = []
    var node = list
    while let current = node {
        if let data = current.pointee.data {
            out.append(GObjectRef(taking: data.assumingMemoryBound(to: SecretItem.self)))
        }
        node = current.pointee.next
    }
    g_list_free(list)
    return out
}

/// Builds a GList (not owning its elements) for libsecret calls that take a list of items.
func withItemList<R>(_ items: [GObjectRef<SecretItem>], _ body: (UnsafeMutablePointer<GList>?) throws -> R) rethrows -> R {
    var list: UnsafeMutablePointer<GList>?
    for item in items.reversed() { list = g_list_prepend(list, item.pointer) }
    defer { g_list_free(list) }
    return try body(list)
}

/// A GLib string returned with "transfer full": copied into Swift and freed.
func takeGString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}
