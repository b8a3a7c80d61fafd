// session open: counts the session, then, with the password kept at auth, unwraps
// the master key as the user and caches it in the user's kernel keyring with the
// lock-after timeout, and hands over the device key that root derived from the
// host key (LoginKeys and DeviceKey, shared with the CLI). The kept password is
// dropped once used. Without a kept password (an SSH key, a fingerprint, or an
// application whose session runs where auth's module data is not), it does nothing.
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
            call.log.notice("no password was captured at auth for \(user.name) (SSH key, fingerprint, pam_keygate.so missing from the auth stack, or auth ran in another process): the keychain stays locked; `keygate unlock` opens it")
            return PAM_IGNORE
        }
        let device = deviceKey(for: user, call)
        let directory = call.dataDirectory(of: user)
        let lockAfter = call.lockAfter
        let unlocked: Bool = try withExtendedLifetime(password) {
            defer { call.handle.forgetPassword(for: user.name) }
            return try UserIdentity.run(as: user) {
                guard LoginKeys.isInitialized(dataDirectory: directory) else {
                    call.log.debug("\(user.name) has no keychain in \(directory): nothing to unlock")
                    if let device {
                        // So that a keychain made in this session can hold this-device-only items.
                        try LoginKeys.handOverDeviceKey(device, uid: user.uid, lockAfter: lockAfter)
                    }
                    return false
                }
                try LoginKeys.unlockAndCache(password: password, dataDirectory: directory,
                                             uid: user.uid, lockAfter: lockAfter, deviceKey: device)
                return true
            }
        }
        guard unlocked else { return PAM_IGNORE }
        call.log.notice("unlocked the keychain of \(user.name) for \(lockAfter) s\(device == nil ? "" : ", with the device key")")
        return PAM_SUCCESS
    }

    /// The user's device key, derived as root from the host key; nil (logged) when the
    /// host has none or it cannot be read: this-device-only items then stay closed.
    private static func deviceKey(for user: TargetUser, _ call: ModuleCall) -> SecureBytes? {
        do {
            guard let key = try LoginKeys.deriveDeviceKey(uid: user.uid) else {
                call.log.debug("this host has no host key (\(LoginKeys.hostKeyPath)): no device key for \(user.name), this-device-only items stay closed; `keygate setup-host` makes one")
                return nil
            }
            return key
        } catch {
            call.log.warning("no device key for \(user.name): \(error); this-device-only items stay closed")
            return nil
        }
    }
}
