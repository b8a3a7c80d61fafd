// Turns what a Secret Service call reports (a GError, with the D-Bus error name the daemon
// sent) into a KeychainError that says what happened and what to do, with advice for the
// provider that answers (SecretServiceProvider: gnome-keyring, KeePassXC, KWallet). Never shows
// a GError code; the error's message may follow in parentheses (the Secret Service never puts a
// secret in one).
internal import CGio
internal import Glibc

enum SecretServiceFailure {
    /// Every locked-collection message starts so (scripts and tests match it).
    static let lockedPrefix = "the default keyring collection is locked"
    /// Every did-not-answer message starts so.
    static let timeoutPrefix = "the Secret Service did not answer within"
    static let noServiceMessage = "no Secret Service on the session bus: start gnome-keyring-daemon "
        + "(or KeePassXC with its Secret Service integration enabled, or kwalletd5), or run under " + InstalledTools.secretSession

    /// The Secret Service's D-Bus error names.
    static let lockedErrorName = "org.freedesktop.Secret.Error.IsLocked"
    static let noSuchObjectErrorName = "org.freedesktop.Secret.Error.NoSuchObject"
    static let noSessionErrorName = "org.freedesktop.Secret.Error.NoSession"

    static func locked(_ provider: SecretServiceProvider) -> KeychainError {
        .interactionNotAllowed(lockedPrefix + " (\(provider.name)): " + provider.unlockAdvice)
    }

    static func noDefaultCollection(_ provider: SecretServiceProvider) -> KeychainError {
        .notAvailable("\(provider.name) has no default collection: " + provider.defaultCollectionAdvice)
    }

    /// The error for a failed call. `action` says what was being done ("search for items").
    static func map(_ error: GErrorInfo?, action: String, deadline: ServiceDeadline,
                    provider: SecretServiceProvider = .unknown) -> KeychainError {
        let detail = error.map { $0.message.isEmpty ? "" : " (\($0.message))" } ?? ""
        let daemon = provider.daemonName
        guard let error else {
            return .notAvailable("the Secret Service could not \(action) and gave no reason: "
                                 + "check that \(daemon) is running, then try again")
        }
        let io = g_io_error_quark(), dbus = g_dbus_error_quark()
        if error.is(dbus, G_DBUS_ERROR_NO_REPLY.rawValue), provider == .unknown {
            // The bus answered for a provider that quit during the call: nobody owns the name now.
            return .notAvailable(noServiceMessage + " (the Secret Service quit while Keygate tried to \(action))")
        }
        if error.is(io, G_IO_ERROR_CANCELLED.rawValue) || error.is(io, G_IO_ERROR_TIMED_OUT.rawValue)
            || error.is(dbus, G_DBUS_ERROR_NO_REPLY.rawValue) || error.is(dbus, G_DBUS_ERROR_TIMEOUT.rawValue)
            || error.is(dbus, G_DBUS_ERROR_TIMED_OUT.rawValue) {
            return .notAvailable(timeoutPrefix + " \(deadline.limitText): check that "
                                 + "\(daemon) is running and responsive (or run under \(InstalledTools.secretSession))"
                                 + provider.slowAnswerHint)
        }
        if error.remoteName == lockedErrorName || error.message.lowercased().contains("locked") {
            return locked(provider)
        }
        if error.is(dbus, G_DBUS_ERROR_SERVICE_UNKNOWN.rawValue) || error.is(dbus, G_DBUS_ERROR_NAME_HAS_NO_OWNER.rawValue)
            || error.message.contains("was not provided by any .service files") {
            return .notAvailable(noServiceMessage + detail)
        }
        if !hasSessionBusAddress || error.message.contains("Cannot autolaunch D-Bus") {
            return .notAvailable("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): start one with "
                                 + "dbus-run-session and gnome-keyring-daemon, or run under " + InstalledTools.secretSession + detail)
        }
        if error.is(dbus, G_DBUS_ERROR_DISCONNECTED.rawValue) || error.is(dbus, G_DBUS_ERROR_NO_SERVER.rawValue)
            || error.is(io, G_IO_ERROR_NOT_FOUND.rawValue) || error.is(io, G_IO_ERROR_CONNECTION_REFUSED.rawValue)
            || error.is(io, G_IO_ERROR_CLOSED.rawValue) || error.is(io, G_IO_ERROR_BROKEN_PIPE.rawValue) {
            return .notAvailable("cannot reach the D-Bus session bus at DBUS_SESSION_BUS_ADDRESS: start a session bus "
                                 + "and gnome-keyring-daemon, or run under " + InstalledTools.secretSession + detail)
        }
        if error.remoteName == noSuchObjectErrorName || error.is(dbus, G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue)
            || error.is(dbus, G_DBUS_ERROR_UNKNOWN_METHOD.rawValue) || error.is(dbus, G_DBUS_ERROR_UNKNOWN_INTERFACE.rawValue)
            || error.is(dbus, G_DBUS_ERROR_UNKNOWN_PROPERTY.rawValue) {
            return .itemNotFound("the item went away while Keygate tried to \(action): try again" + detail)
        }
        return .notAvailable("the Secret Service could not \(action): check that \(daemon) is running "
                             + "and healthy, then try again" + detail)
    }

    private static var hasSessionBusAddress: Bool {
        guard let value = getenv("DBUS_SESSION_BUS_ADDRESS") else { return false }
        return value.pointee != 0
    }
}
