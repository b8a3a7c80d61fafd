// chauthtok: in the update phase, re-wraps the keychain's login protector from the
// old password to the new one (PAM_OLDAUTHTOK and PAM_AUTHTOK, as pam_unix left
// them), as the user, atomically (LoginKeys and KeyStore). It never fails the
// password change; without the old password (root's reset) it marks the protector
// stale, so that the next `keygate unlock` says how to recover.
internal import CPAM
import KeygateCore
import KeygateIdentity

enum ChangePassword {
    static func run(_ call: ModuleCall) throws -> Int32 {
        guard call.flags & PAM_UPDATE_AUTHTOK != 0 else { return PAM_IGNORE }  // the preliminary check: nothing to do
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        let directory = call.dataDirectory(of: user)
        guard let newPassword = try call.handle.password(PAM_AUTHTOK) else {
            call.log.warning("""
                no new password is set for \(user.name) (put pam_keygate.so after pam_unix in the password stack): the keychain \
                still opens with the old password; run `keygate passwd`
                """)
            return PAM_IGNORE
        }
        let oldPassword = try call.handle.password(PAM_OLDAUTHTOK)
        return try UserIdentity.run(as: user) {
            guard LoginKeys.isInitialized(dataDirectory: directory) else {
                call.log.debug("\(user.name) has no keychain in \(directory): nothing to re-wrap")
                return PAM_IGNORE
            }
            guard let oldPassword else {
                try LoginKeys.markLoginStale(dataDirectory: directory)
                call.log.warning("""
                    the password of \(user.name) was changed without the old one (reset by root?): the keychain's login protector is \
                    marked stale and still opens with the old password only, so login will not unlock it; the user should run `keygate \
                    passwd --recovery` (recovery key), or `keygate passwd` with the old password
                    """)
                return PAM_IGNORE
            }
            try LoginKeys.rewrapLogin(oldPassword: oldPassword, newPassword: newPassword, dataDirectory: directory)
            LoginKeys.dropCurrentSetKeys(uid: user.uid)
            call.log.notice("re-wrapped the keychain of \(user.name) for the new password")
            return PAM_IGNORE
        }
    }
}
