// Small owners for the GLib resources the storage layer meets besides GVariants
// (SecretServiceVariants) and the bus connection (SecretServiceConnection): a GError is
// copied into a Swift value, with the D-Bus error name the Secret Service sent, and freed at once.
internal import CGio

/// A GError copied into Swift: its domain, code, the remote D-Bus error name (when the error
/// came from the other end), and its message (with that name removed).
struct GErrorInfo: Sendable {
    let domain: GQuark
    let code: Int32
    let message: String
    /// e.g. "org.freedesktop.Secret.Error.IsLocked"; nil for a local error.
    let remoteName: String?

    /// Copies and frees `error`; nil when there was no error.
    static func take(_ error: UnsafeMutablePointer<GError>?) -> GErrorInfo? {
        guard let error else { return nil }
        defer { g_error_free(error) }
        let remote = takeGString(g_dbus_error_get_remote_error(error))
        _ = g_dbus_error_strip_remote_error(error)
        let message = error.pointee.message.map { String(cString: $0) } ?? ""
        return GErrorInfo(domain: error.pointee.domain, code: error.pointee.code, message: message, remoteName: remote)
    }

    func `is`(_ domain: GQuark, _ code: UInt32) -> Bool { self.domain == domain && self.code == Int32(bitPattern: code) }
}

/// A GLib string returned with "transfer full": copied into Swift and freed.
func takeGString(_ pointer: UnsafeMutablePointer<gchar>?) -> String? {
    guard let pointer else { return nil }
    defer { g_free(pointer) }
    return String(cString: pointer)
}
