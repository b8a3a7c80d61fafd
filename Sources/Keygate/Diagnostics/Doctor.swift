// `keygate doctor`'s checks in order. The system checks (bus, PAM, policies, host
// key, gatekeeper, keyring quota, same-user isolation, where audit lines go, fingerprints) are this folder's; the Secret Service and keychain checks read
// the KeychainStatus snapshot the caller takes (KeychainStatus(of:)), so the
// doctor itself never prompts and never reads a secret; the Secret Service check also writes,
// reads and deletes one throwaway item (SecretServiceRoundTripCheck).
internal import KeygateSystemBus

public enum Doctor {
    /// Checks that need nothing from the keychain: session bus, PAM files and stacks,
    /// policy files, host key, the setuid gatekeeper, keyring quota, same-user isolation (ptrace, TIOCSTI),
    /// who answers org.freedesktop.secrets (and whether it is Keygate's own), fprintd, pam_fprintd
    /// in the biometric stack and the enrolled fingers.
    /// `environment`: the one the caller's edge read (the CLI's), passed down.
    public static func systemChecks(environment: KeygateEnvironment) -> [DiagnosticResult] {
        [
            SessionBusCheck.run(environment: environment),
            PAMSetupCheck.serviceFiles(),
            PAMSetupCheck.stacks(),
            PolicyFilesCheck.run(PolicySet.loadForCurrentUser(environment: environment)),
            HostKeyCheck.run(environment: environment),
            GatekeeperCheck.run(candidates: GatekeeperLocator.candidates(environment: environment)),
            KeyringQuotaCheck.run(),
            SameUserIsolationCheck.run(),
            AuditLogCheck.run(environment: environment),
        ] + [SecretServiceProviderCheck.run(environment: environment)].compactMap { $0 } + FingerprintCheck.run(userName: (try? UserAccount.current().name) ?? "", environment: environment)
    }

    /// Checks read from a status snapshot: Secret Service and collection, keychain state, timeouts.
    /// With the Secret Service in use and its collection unlocked, the secret-service check is
    /// a round trip of a throwaway item (SecretServiceRoundTripCheck) naming the provider.
    public static func keychainChecks(_ status: KeychainStatus) -> [DiagnosticResult] {
        let usesService = status.storeKind == StoreKind.secretService.rawValue && status.storeError == nil
        let provider = usesService ? SecretServiceConnection.shared.provider(ServiceDeadline(.seconds(5))) : .unknown
        var service = KeychainStateCheck.secretService(status, provider: provider)
        if service.level == .ok, status.storeKind == StoreKind.secretService.rawValue {
            service = SecretServiceRoundTripCheck.run(base: service)
        }
        return [StoreCheck.run(status), service, ProviderPartsCheck.run(provider), DiskSpaceCheck.run(dataDirectory: status.dataDirectory),
                KeychainStateCheck.keychain(status), KeychainStateCheck.timeouts(status), KeychainStateCheck.lockout(status)]
            .compactMap { $0 }
    }

    /// Who answers org.freedesktop.secrets on the session bus, and whether it is Keygate's own
    /// keygate-secret-service (`keygate init` says it too). Nil where there is no session bus.
    public static func secretServiceProvider(environment: KeygateEnvironment) -> (text: String, isKeygate: Bool)? {
        SecretServiceProviderCheck.describe(environment: environment)
    }

    /// Damaged items (their secret came back empty), when there are any: a WARN naming them
    /// (DamagedItemsCheck). Reads sealed blobs only, never with a provider's window.
    public static func damagedItems(_ operations: KeychainOperations, _ status: KeychainStatus) -> DiagnosticResult? {
        guard status.storeError == nil, status.collectionLocked != true else { return nil }
        return DamagedItemsCheck.run(operations)
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
