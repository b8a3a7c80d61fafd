// Doctor checks built from `keygate status`' snapshot (KeychainStatus): the Secret
// Service and its default collection's lock state, the keychain itself (created,
// locked or unlocked) and the timeouts in force with the keys cached now.

enum KeychainStateCheck {
    /// `provider`: who answers org.freedesktop.secrets, for the advice on a locked collection.
    static func secretService(_ s: KeychainStatus, provider: SecretServiceProvider = .unknown) -> DiagnosticResult {
        if s.storeKind == StoreKind.embedded.rawValue {
            return DiagnosticResult("secret-service", .ok, "not used: the embedded store holds the items (see the store check)")
        }
        if let error = s.storeError, KeychainStatus.isRunningWithoutDefaultCollection(error) {
            return DiagnosticResult("secret-service", .fail, error, advice: """
                do as it says, then run keygate doctor again; Keygate keeps to the Secret Service while one runs (to keep the items \
                in the embedded store instead: KEYGATE_STORE=embedded, or store = embedded in ~/.config/keygate/keygate.conf)
                """)
        }
        if let error = s.storeError {
            return DiagnosticResult("secret-service", .fail, error,
                                    advice: "start gnome-keyring (gnome-keyring-daemon --start --components=secrets, or the user unit "
                                        + InstalledTools.secretServiceUnit + "), or run under " + InstalledTools.secretSession)
        }
        let where_ = "\(s.store ?? "Secret Service"), collection \"\(s.collection ?? "?")\""
        if s.collectionLocked == true {
            let advice: String
            switch provider {
            case .gnomeKeyring, .unknown:
                advice = "unlock the login keyring: log in to the desktop, use pam_gnome_keyring, or "
                    + "`gnome-keyring-daemon --unlock` with its password on stdin"
            default:
                advice = provider.unlockAdvice
            }
            return DiagnosticResult("secret-service", .warn, where_ + " (\(provider.name)) is locked: reads and writes ask "
                                    + "\(provider.name) to unlock it where a window can be shown, else fail with exit 36",
                                    advice: advice)
        }
        return DiagnosticResult("secret-service", .ok, where_ + " is unlocked")
    }

    static func keychain(_ s: KeychainStatus) -> DiagnosticResult {
        guard s.initialized else {
            return DiagnosticResult("keychain", .ok, "not created yet in \(s.dataDirectory)",
                                    advice: "keygate init (or the first keygate add) creates it and shows a recovery key once")
        }
        if s.loginStale {
            return DiagnosticResult("keychain", .warn, KeychainStatus.staleLoginProblem + " (\(s.dataDirectory))",
                                    advice: KeychainStatus.staleLoginAdvice)
        }
        if s.unlocked {
            return DiagnosticResult("keychain", .ok, "unlocked" + (s.secondsUntilLock.map { ", locks in \($0) s" } ?? "") + " (\(s.dataDirectory))")
        }
        let afu = s.afterFirstUnlockAvailable ? "; after-first-unlock items readable" : ""
        return DiagnosticResult("keychain", .ok, "locked\(afu) (\(s.dataDirectory)); the next read asks for your password")
    }

    static func timeouts(_ s: KeychainStatus) -> DiagnosticResult {
        var detail = "lock-after \(s.lockAfter) s, reuse \(s.reuseDuration) s in scope \(s.reuseScope)"
        if s.cachedKeys.isEmpty {
            detail += "; no keys cached"
        } else {
            detail += "; cached: " + s.cachedKeys.map { "\($0.name) (\($0.secondsLeft.map { "\($0) s left" } ?? "no timeout"))" }
                .joined(separator: ", ")
        }
        return DiagnosticResult("timeouts", .ok, detail)
    }

    /// The user's one lockout, as root's records hold it (nil: the gatekeeper could not be asked,
    /// which the gatekeeper check reports).
    static func lockout(_ s: KeychainStatus) -> DiagnosticResult? {
        guard let left = s.lockoutSecondsLeft else { return nil }
        guard left == 0 else {
            return DiagnosticResult("lockout", .warn, """
                locked out after repeated failed authentications: no password or finger is tried for any gated item for \(left) \
                more s
                """, advice: "wait \(left) s, then authenticate once with the right password; typed guesses only start it again")
        }
        let failed = s.failedAttempts ?? 0
        return DiagnosticResult("lockout", .ok, failed == 0 ? "none" : "none; \(failed) failed attempt\(failed == 1 ? "" : "s") since the last success")
    }
}
