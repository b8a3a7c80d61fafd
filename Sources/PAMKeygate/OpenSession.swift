// session open: counts the session, then, with the password kept at auth, unwraps
// the master key as the user and caches it in the user's kernel keyring with the
// lock-after timeout (LoginKeys, shared with the CLI). No device key is handed over:
// this-device-only items open through keygate-gatekeeper, and that key stays root's
// (docs/GATEKEEPER.md). The kept password is
// dropped once used. Without a kept password (an SSH key, a fingerprint, a service
// started with PAMName=, or an application whose session runs where auth's module
// data is not), it unlocks with the host protector when the system policy's
// host-protector names the user and the keychain has one; otherwise it does nothing.
internal import CPAM
#if !KEYGATE_PAM_STANDALONE
import Keygate
#endif

enum OpenSession {
    static func run(_ call: ModuleCall) throws -> Int32 {
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        do {
            let count = try SessionCounter(uid: user.uid).open()
            call.log.debug("session opened for \(user.name): \(count) open")
        } catch {
            call.log.error("could not count the session of \(user.name): \(error); logging out may leave the keychain unlocked until it times out")
        }
        guard let password = call.handle.keptPassword(for: user.name) else {
            if try unlockWithHostProtector(user, call) { return PAM_SUCCESS }
            let why = "no password was captured at auth for \(user.name) (SSH key, fingerprint, pam_keygate.so missing from the auth stack, or auth ran in another process): the keychain stays locked; `keygate unlock` opens it"
            // A job (cron, a service) never types a password: saying so at every run is noise.
            if call.handle.isInteractiveSession() { call.log.notice(why) } else { call.log.debug(why) }
            return PAM_IGNORE
        }
        let directory = call.dataDirectory(of: user)
        let lockAfter = call.lockAfter
        let unlocked: SecureBytes? = try withExtendedLifetime(password) {
            defer { call.handle.forgetPassword(for: user.name) }
            return try UserIdentity.run(as: user) {
                guard LoginKeys.isInitialized(dataDirectory: directory) else {
                    call.log.debug("\(user.name) has no keychain in \(directory): nothing to unlock")
                    return nil
                }
                return try LoginKeys.unlockAndCache(password: password, dataDirectory: directory,
                                                    uid: user.uid, lockAfter: lockAfter)
            }
        }
        guard let master = unlocked else { return PAM_IGNORE }
        // As root: the gatekeeper's seals on the class keys, so that gated adds need no prompt.
        do {
            let seals = try LoginKeys.sealClassKeys(master: master, uid: user.uid, userName: user.name)
            try UserIdentity.run(as: user) { try LoginKeys.recordClassKeys(master: master, seals: seals, dataDirectory: directory) }
        } catch {
            call.log.warning("could not seal the keychain's class keys for \(user.name): \(error); the first item with access control asks for the password once")
        }
        call.log.notice("unlocked the keychain of \(user.name) for \(lockAfter) s")
        return PAM_SUCCESS
    }

    /// A session with no password (a systemd service with PAMName=, `runuser -l`) of a
    /// user whom the system policy's host-protector names and whose keychain has a host
    /// protector: unlock it as a login would, with the key root derives from the host key.
    /// False (nothing done) otherwise.
    private static func unlockWithHostProtector(_ user: TargetUser, _ call: ModuleCall) throws -> Bool {
        let account = AccountEntry(name: user.name, uid: user.uid, gid: user.gid, home: user.home)
        guard HostProtectorPolicy.enables(try HostProtectorPolicy.decision(for: account), account) else { return false }
        guard let key = try LoginKeys.deriveHostProtectorKey(uid: user.uid) else {
            call.log.warning("the policy enables the host protector for \(user.name), but this host has no host key (\(LoginKeys.hostKeyPath)): the keychain stays locked; run `keygate setup-host`")
            return false
        }
        let directory = call.dataDirectory(of: user)
        let lockAfter = call.lockAfter
        let unlocked = try UserIdentity.run(as: user) { () throws -> Bool in
            guard LoginKeys.hasHostProtector(dataDirectory: directory) else { return false }
            try LoginKeys.unlockWithHostProtector(key, dataDirectory: directory, uid: user.uid,
                                                  lockAfter: lockAfter)
            return true
        }
        if unlocked {
            call.log.notice("unlocked the keychain of \(user.name) with its host protector for \(lockAfter) s (after-first-unlock items until reboot)")
        } else {
            call.log.debug("the policy enables the host protector for \(user.name), but \(directory) has none: `keygate init --host-protector --user \(user.name)` makes one")
        }
        return unlocked
    }
}
