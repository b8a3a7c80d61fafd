// Root's two host-protector operations on a service account's keychain, as the CLI
// runs them: `keygate init --host-protector --user NAME` (create a passwordless
// keychain wrapped by the host protector and a recovery key, or add a host protector
// to an unlocked keychain) and `keygate unlock --host-protector --user NAME` (the boot
// step: what a login does, without a password). Both need root (the host key), and
// the system policy's `host-protector` naming the user (HostProtectorPolicy). The key
// is derived as root (HostProtector); everything that touches the user's files and
// kernel keyring runs as the user (UserIdentity), so files stay the user's and keys
// land in the user's @u. Caching is LoginKeys', shared with pam_keygate. Root's code: it lives
// in the keygate CLI with UserIdentity (KeygateIdentity), not in the library apps link.
import Keygate
import KeygateIdentity

enum HostProtectorAdmin {
    /// What `enable` did.
    enum Outcome: Sendable {
        /// A new keychain: its recovery key (formatted), to be shown once.
        case created(recoveryKey: SecureBytes)
        /// A host protector was added to (or replaced in) an existing, unlocked keychain.
        case added
    }

    /// Gives `userName`'s keychain a host protector, creating the keychain when there is
    /// none, and leaves it unlocked as the boot step would.
    static func enable(userName: String, environment: KeygateEnvironment) throws -> Outcome {
        let (account, decision, key) = try prepare(userName, environment: environment)
        let directory = LoginKeys.dataDirectory(home: account.home)
        let lockAfter = decision.policy.lockAfter
        // Root seals the class keys of the new master key (docs/GATEKEEPER.md): a keychain with no
        // password can never authenticate through the gatekeeper to have them sealed.
        let newMaster = try SecureBytes.random(count: Protector.masterKeyBytes)
        let seals = try RootGatekeeper.sealsForUser(account.uid, master: newMaster, prompter: SystemPrompter(environment: [:]),
                                                  environment: environment)
        return try UserIdentity.run(name: account.name, uid: account.uid, gid: account.gid) {
            let store = KeyStore(directory: directory)
            if !store.isInitialized {
                let created = try store.initializeForHost(hostProtectorKey: key, masterKey: newMaster, seals: seals)
                // A service account has no session bus: its items go to the embedded store
                // (docs/SERVICES.md), whatever bus root's own session has. Without this record, the
                // account's first add would take the new keychain for one older than the embedded
                // store and go to the Secret Service (53 with no bus). KEYGATE_STORE and keygate.conf
                // still win; `keygate migrate` moves the items.
                if StoreSelection.recorded(in: directory) == nil { try StoreSelection.record(.embedded, in: directory) }
                try LoginKeys.cacheLogin(created.masterKey, store: store, uid: account.uid, lockAfter: lockAfter)
                AuditLog.record(AuditRecord(event: .unlock, user: account.name, pamService: nil, scope: "host-protector",
                                            reason: nil, detail: "keychain created with a host protector"))
                return .created(recoveryKey: try RecoveryKey.format(created.recoveryKey))
            }
            guard let master = KeyCache(uid: account.uid).load(LoginKeys.masterName)?.key else {
                throw KeychainError.interactionNotAllowed("""
                    the keychain of \(account.name) exists and is locked, and root cannot open it without its password: unlock it as \
                    \(account.name) first (`keygate unlock`, or `keygate unlock --recovery`), then run this again
                    """)
            }
            try store.writeHostProtector(masterKey: master, hostProtectorKey: key)
            return .added
        }
    }

    /// The boot step: opens `userName`'s keychain with its host protector and caches the
    /// master key for the policy's lock-after time and the after-first-unlock class
    /// keys until reboot (or `keygate lock --all`), in the user's kernel keyring.
    /// Returns the lock-after time in seconds.
    @discardableResult
    static func unlock(userName: String, environment: KeygateEnvironment) throws -> UInt32 {
        let (account, decision, key) = try prepare(userName, environment: environment)
        let directory = LoginKeys.dataDirectory(home: account.home)
        let lockAfter = decision.policy.lockAfter
        let master = try UserIdentity.run(name: account.name, uid: account.uid, gid: account.gid) { () throws -> SecureBytes in
            let store = KeyStore(directory: directory)
            let master = try store.unlock(hostProtectorKey: key)
            try LoginKeys.cacheLogin(master, store: store, uid: account.uid, lockAfter: lockAfter)
            return master
        }
        // Root seals the class keys (a passwordless keychain cannot authenticate through the gatekeeper).
        let seals = try RootGatekeeper.sealsForUser(account.uid, master: master, prompter: SystemPrompter(environment: [:]),
                                                  environment: environment)
        try UserIdentity.run(name: account.name, uid: account.uid, gid: account.gid) {
            try KeyStore(directory: directory).recordClassKeys(masterKey: master, seals: seals)
        }
        AuditLog.record(AuditRecord(event: .unlock, user: account.name, pamService: nil, scope: "host-protector",
                                    reason: nil, detail: "unlocked by the host protector; master key held for \(lockAfter) s"))
        return lockAfter
    }

    /// Root, the account, a policy that names it, and its host-protector key.
    private static func prepare(_ userName: String, environment: KeygateEnvironment) throws -> (AccountEntry, PolicyDecision, SecureBytes) {
        guard ProcessIdentity.euid == 0 else {
            throw KeychainError.param("""
                only root can use the host protector (it is derived from the root-only host key): run it with sudo, or from a \
                unit's ExecStartPre=+
                """)
        }
        let account = try AccountEntry.lookup(name: userName)
        let decision = try HostProtectorPolicy.require(account, environment: environment)
        guard let key = try HostProtector.deriveFromHost(uid: account.uid, environment: environment) else {
            throw KeychainError.notAvailable(HostProtector.noHostKeyAdvice)
        }
        return (account, decision, key)
    }
}
