// session open: counts the session (SessionCounter: the opening process and its start
// time) unless the module counted it (the "unlock" phase: the module found the keychain
// locked). The password unlock happened at auth (Authenticate). A keychain still locked
// here is unlocked with the host protector when the system policy's host-protector
// names the user and the keychain has one (a systemd service with PAMName=, `runuser
// -l`); otherwise it stays locked, and when the reason is known and the user can act
// on it (root reset the password, so the login protector is stale) one PAM_TEXT_INFO
// line says so on the screen. Never decides the session: always PAM_IGNORE.
internal import CPAM
import KeygateCore
import KeygateIdentity

enum OpenSession {
    /// The line a person sees after a login that could not unlock a stale keychain.
    static let staleMessage = """
        Keygate: your keychain stays locked: your password was reset without the old one, and the keychain still opens with \
        the old password. Run `keygate passwd` (it asks the old password) or `keygate passwd --recovery` (recovery key).
        """

    static func run(_ call: ModuleCall, counting: Bool) throws -> Int32 {
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        if counting { count(user, call) }
        let directory = call.dataDirectory(of: user)
        let (initialized, unlocked, stale) = try UserIdentity.run(as: user) {
            (LoginKeys.isInitialized(dataDirectory: directory), LoginKeys.isUnlocked(uid: user.uid),
             LoginKeys.isLoginStale(dataDirectory: directory))
        }
        guard initialized else {
            call.log.debug("\(user.name) has no keychain in \(directory): nothing to unlock")
            return PAM_IGNORE
        }
        guard !unlocked else {
            call.log.debug("the keychain of \(user.name) is unlocked")
            return PAM_IGNORE
        }
        if try unlockWithHostProtector(user, call) { return PAM_IGNORE }
        if stale {
            call.log.warning("""
                the keychain of \(user.name) stays locked: its login protector is stale (the password was reset without the old \
                one); told the user to run `keygate passwd`
                """)
            if call.handle.isInteractiveSession() { call.handle.info(staleMessage) }
            return PAM_IGNORE
        }
        let why = """
            no password was captured at auth for \(user.name) (SSH key, fingerprint, pam_keygate.so missing from the auth \
            stack, or a password that does not open the keychain): the keychain stays locked; `keygate unlock` opens it
            """
        // A job (cron, a service) never types a password: saying so at every run is noise.
        if call.handle.isInteractiveSession() { call.log.notice(why) } else { call.log.debug(why) }
        return PAM_IGNORE
    }

    private static func count(_ user: TargetUser, _ call: ModuleCall) {
        do {
            let count = try SessionCounter(uid: user.uid, deadline: call.deadline).open()
            call.log.debug("session opened for \(user.name): \(count) open")
        } catch {
            call.log.error("could not count the session of \(user.name): \(error); logging out may leave the keychain unlocked until it times out")
        }
    }

    /// A session with no password (a systemd service with PAMName=, `runuser -l`) of a
    /// user whom the system policy's host-protector names and whose keychain has a host
    /// protector: unlock it as a login would, with the key root derives from the host key.
    /// False (nothing done) otherwise.
    private static func unlockWithHostProtector(_ user: TargetUser, _ call: ModuleCall) throws -> Bool {
        let account = AccountEntry(name: user.name, uid: user.uid, gid: user.gid, home: user.home)
        guard HostProtectorPolicy.enables(try HostProtectorPolicy.decision(for: account, environment: call.environment), account) else { return false }
        guard let key = try LoginKeys.deriveHostProtectorKey(uid: user.uid, environment: call.environment) else {
            call.log.warning("""
                the policy enables the host protector for \(user.name), but this host has no host key (\(LoginKeys.hostKeyPath(call.environment))): \
                the keychain stays locked; run `keygate setup-host`
                """)
            return false
        }
        let directory = call.dataDirectory(of: user)
        let lockAfter = call.lockAfter(for: user)
        let unlocked = try UserIdentity.run(as: user) { () throws -> Bool in
            guard LoginKeys.hasHostProtector(dataDirectory: directory) else { return false }
            try LoginKeys.unlockWithHostProtector(key, dataDirectory: directory, uid: user.uid,
                                                  lockAfter: lockAfter)
            return true
        }
        if unlocked {
            call.log.notice("""
                unlocked the keychain of \(user.name) with its host protector for \(lockAfter) s (after-first-unlock items until \
                reboot)
                """)
        } else {
            call.log.debug("""
                the policy enables the host protector for \(user.name), but \(directory) has none: `keygate init --host-protector \
                --user \(user.name)` makes one
                """)
        }
        return unlocked
    }
}
