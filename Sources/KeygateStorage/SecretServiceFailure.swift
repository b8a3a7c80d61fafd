// Turns what a Secret Service call reports (the D-Bus error name and message the daemon, the
// bus or sd-bus itself sent, or a local errno) into a KeychainError that says what happened
// and what to do, with advice for the provider that answers (SecretServiceProvider: gnome-keyring, KeePassXC, KWallet). Never shows
// an error code; the error's message may follow in parentheses (the Secret Service never puts a
// secret in one).
import KeygateCore

package enum SecretServiceFailure {
    /// Every locked-collection message starts so (scripts and tests match it).
    static let lockedPrefix = "the default keyring collection is locked"
    /// Every did-not-answer message starts so.
    static let timeoutPrefix = "the Secret Service did not answer within"
    static let noServiceMessage = "no Secret Service on the session bus: start gnome-keyring-daemon "
        + "(or KeePassXC with its Secret Service integration enabled, or kwalletd5), or run under " + InstalledTools.secretSession

    /// The Secret Service's D-Bus error names.
    static let lockedErrorName = "org.freedesktop.Secret.Error.IsLocked"
    static let noSuchObjectErrorName = "org.freedesktop.Secret.Error.NoSuchObject"
    /// The session a call named is gone (the daemon restarted): the Secret Service spec's error,
    /// which gnome-keyring (checked against it) and KeePassXC (its fdosecrets code) send.
    static let noSessionErrorName = "org.freedesktop.Secret.Error.NoSession"

    static func locked(_ provider: SecretServiceProvider) -> KeychainError {
        KeychainError(.interactionNotAllowed, lockedPrefix + " (\(provider.name)): " + provider.unlockAdvice,
                      reason: .lockedCollection)
    }

    /// Every per-item lock message starts so.
    static let lockedItemPrefix = "access to the item is not granted"

    /// The collection is open but the provider keeps the items locked for this client, and no
    /// window may be shown to grant access (`why`: the unlock prompt is off, or nobody answered).
    static func lockedItem(_ provider: SecretServiceProvider, why: String) -> KeychainError {
        KeychainError(.interactionNotAllowed, lockedItemPrefix + " (\(provider.name) locks each item for each program until "
                      + "you allow it; \(why)): " + provider.itemAccessAdvice, reason: .lockedItem)
    }

    /// In every no-default-collection message, after the provider's name (doctor tells it apart).
    package static let noDefaultCollectionMarker = " has no default collection: "

    static func noDefaultCollection(_ provider: SecretServiceProvider,
                                    loginWallet: SecretServiceConnection.LoginWallet? = nil) -> KeychainError {
        let advice: String
        if loginWallet == .open || loginWallet == .closed {
            // The first login's wallet: made by pam_kwallet5, not yet a Secret Service collection.
            advice = "the wallet \(SecretServiceConnection.kWalletLoginWallet) exists" + (loginWallet == .open ? " and is open" : "")
                + ", but kwalletd5 shows a wallet to Secret Service programs only from its next start (pam_kwallet5 made it "
                + "at this login): log out and back in once, then try again"
        } else {
            advice = provider.defaultCollectionAdvice
        }
        return KeychainError(.notAvailable, provider.name + noDefaultCollectionMarker + advice, reason: .noDefaultCollection)
    }

    /// The error for a failed call. `action` says what was being done ("search for items").
    /// `sessionBus`: whether the connection's environment names a session bus (DBUS_SESSION_BUS_ADDRESS).
    static func map(_ error: BusErrorInfo?, action: String, deadline: ServiceDeadline,
                    provider: SecretServiceProvider = .unknown, sessionBus: Bool = true) -> KeychainError {
        let detail = error.map { $0.message.isEmpty ? "" : " (\($0.message))" } ?? ""
        let daemon = provider.daemonName
        guard let error else {
            return .notAvailable("the Secret Service could not \(action) and gave no reason: "
                                 + "check that \(daemon) is running, then try again")
        }
        let name = error.name ?? ""
        if name == BusErrorName.noReply, !error.isLocalTimeout, !error.isConnectionLost, provider == .unknown {
            // The bus answered for a provider that quit during the call: nobody owns the name now.
            return KeychainError(.notAvailable, noServiceMessage + " (the Secret Service quit while Keygate tried to \(action))",
                                 reason: .providerQuit)
        }
        if error.isLocalTimeout || name == BusErrorName.timeout || name == BusErrorName.timedOut
            || (name == BusErrorName.noReply && !error.isConnectionLost) {
            return KeychainError.notAvailable(timeoutPrefix + " \(deadline.limitText): check that "
                                              + "\(daemon) is running and responsive (or run under \(InstalledTools.secretSession))"
                                              + provider.slowAnswerHint).because(.secretServiceTimeout)
        }
        if name == lockedErrorName || error.message.lowercased().contains("locked") {
            return locked(provider)
        }
        if name == BusErrorName.serviceUnknown || name == BusErrorName.nameHasNoOwner
            || error.message.contains("was not provided by any .service files") {
            return .notAvailable(noServiceMessage + detail)
        }
        if error.name == nil, !sessionBus {
            return .notAvailable("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set): start one with "
                                 + "dbus-run-session and gnome-keyring-daemon, or run under " + InstalledTools.secretSession + detail)
        }
        if error.isConnectionLost || name == BusErrorName.disconnected || name == BusErrorName.noServer {
            return .notAvailable("cannot reach the D-Bus session bus at DBUS_SESSION_BUS_ADDRESS: start a session bus "
                                 + "and gnome-keyring-daemon, or run under " + InstalledTools.secretSession + detail)
        }
        if name == noSuchObjectErrorName || name == BusErrorName.unknownObject || name == BusErrorName.unknownMethod
            || name == BusErrorName.unknownInterface || name == BusErrorName.unknownProperty {
            return .itemNotFound("the item went away while Keygate tried to \(action): try again" + detail)
        }
        let failed = KeychainError.notAvailable("the Secret Service could not \(action): check that \(daemon) is running "
                                                + "and healthy, then try again" + detail)
        return name == noSessionErrorName ? failed.because(.staleSession) : failed
    }
}
