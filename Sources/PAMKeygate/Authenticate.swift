// auth: keeps a locked-memory copy of the password an earlier module (pam_unix)
// took, for open_session. Never decides the login: always PAM_IGNORE.
internal import CPAM

enum Authenticate {
    static func run(_ call: ModuleCall) throws -> Int32 {
        guard let user = try call.eligibleUser() else { return PAM_IGNORE }
        guard let password = try call.handle.password(PAM_AUTHTOK) else {
            call.log.debug("no password was typed for \(user.name) before this module (put it after pam_unix): none kept for the session")
            return PAM_IGNORE
        }
        let status = call.handle.keepPassword(password, for: user.name)
        if status == PAM_SUCCESS {
            call.log.debug("kept the typed password of \(user.name) in locked memory for the session")
        } else {
            call.log.error("could not keep the password of \(user.name) for the session (pam_set_data status \(status)): the keychain will stay locked at login")
        }
        return PAM_IGNORE
    }
}
