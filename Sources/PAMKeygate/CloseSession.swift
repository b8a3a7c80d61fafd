// session close: uncounts the session (unless the module did: the "lock" phase, which it
// starts at the user's last session only) and, when it was the user's last, locks the
// keychain as the user: drops the cached master key (as `keygate lock` does) and
// the device key, so this-device-only items close too.
// `unlock_only` leaves the keys to their timeout. Never decides the session: always PAM_IGNORE.
internal import CPAM
import KeygateCore
import KeygateIdentity

enum CloseSession {
    static func run(_ call: ModuleCall, counting: Bool) throws -> Int32 {
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        let remaining = counting ? try SessionCounter(uid: user.uid, deadline: call.deadline).close() : 0
        guard remaining == 0 else {
            call.log.debug("session closed for \(user.name): \(remaining) still open, the keychain stays unlocked")
            return PAM_IGNORE
        }
        guard !call.options.unlockOnly else {
            call.log.debug("last session of \(user.name) closed; unlock_only: the keychain locks at its timeout")
            return PAM_IGNORE
        }
        let locked = try UserIdentity.run(as: user) { LoginKeys.lock(uid: user.uid) }
        if locked {
            call.log.notice("locked the keychain of \(user.name): last session closed")
            return PAM_IGNORE
        }
        call.log.debug("last session of \(user.name) closed; the keychain was already locked")
        return PAM_IGNORE
    }
}
