// `keygate doctor`'s checks in order. The system checks (bus, PAM, policies, host
// key, gatekeeper, keyring quota, same-user isolation) are this folder's; the Secret Service and keychain checks read
// the KeychainStatus snapshot the caller takes (KeychainOperations.status()), so the
// doctor itself never prompts and never reads a secret.

public enum Doctor {
    /// Checks that need nothing from the keychain: session bus, PAM files and stacks,
    /// policy files, host key, the setuid gatekeeper, keyring quota, same-user isolation (ptrace, TIOCSTI).
    public static func systemChecks(environment: [String: String]) -> [DiagnosticResult] {
        [
            SessionBusCheck.run(environment: environment),
            PAMSetupCheck.serviceFiles(),
            PAMSetupCheck.stacks(),
            PolicyFilesCheck.run(PolicySet.loadForCurrentUser(environment: environment)),
            HostKeyCheck.run(),
            GatekeeperCheck.run(),
            KeyringQuotaCheck.run(),
            SameUserIsolationCheck.run(),
        ]
    }

    /// Checks read from a status snapshot: Secret Service and collection, keychain state, timeouts.
    public static func keychainChecks(_ status: KeychainStatus) -> [DiagnosticResult] {
        [StoreCheck.run(status), KeychainStateCheck.secretService(status), KeychainStateCheck.keychain(status), KeychainStateCheck.timeouts(status)]
    }

    /// The system checks adjusted to the store in use (no session bus needed for the embedded store).
    public static func adjust(_ systemChecks: [DiagnosticResult], for status: KeychainStatus) -> [DiagnosticResult] {
        StoreCheck.adjust(systemChecks, for: status)
    }

    /// Where the keychain could not even be opened (e.g. no user entry): one FAIL with the error's advice.
    public static func keychainUnavailable(_ error: KeychainError) -> DiagnosticResult {
        DiagnosticResult("keychain", .fail, error.message, advice: "see the message; then run keygate doctor again")
    }
}
