// session open: counts the session, then, with the password kept at auth, unwraps
// the master key as the user and caches it in the user's kernel keyring with the
// lock-after timeout (LoginKeys, shared with the CLI). The kept password is dropped
// once used.
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
        guard let password = call.handle.keptPassword() else {
            call.log.notice("no password was captured at auth for \(user.name) (SSH key, fingerprint, or pam_keygate.so missing from the auth stack): the keychain stays locked; `keygate unlock` opens it")
            return PAM_IGNORE
        }
        let directory = call.dataDirectory(of: user)
        let lockAfter = call.lockAfter
        let unlocked: Bool = try withExtendedLifetime(password) {
            defer { call.handle.forgetPassword() }
            return try UserIdentity.run(as: user) {
                guard LoginKeys.isInitialized(dataDirectory: directory) else {
                    call.log.debug("\(user.name) has no keychain in \(directory): nothing to unlock")
                    return false
                }
                try LoginKeys.unlockAndCache(password: password, dataDirectory: directory,
                                             uid: user.uid, lockAfter: lockAfter)
                return true
            }
        }
        guard unlocked else { return PAM_IGNORE }
        call.log.notice("unlocked the keychain of \(user.name) for \(lockAfter) s")
        return PAM_SUCCESS
    }
}
