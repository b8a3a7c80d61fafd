// keygate-pam-helper: the heavy half of pam_keygate.so, in the manner of
// unix_chkpwd and gnome-keyring-daemon --login. The thin module (Sources/PAMKeygateModule)
// starts it for auth and chauthtok, and for a session only when there is work the module
// cannot do itself (an unlock at open, the lock at the last close, or a count it could not
// keep: then the "open" and "close" phases count too), with an empty environment, writes the request (phase,
// PAM items, options, passwords) on its standard input and relays what it prints
// (log lines, one PAM_TEXT_INFO line) to pam_syslog and pam_info. The module kills it at
// its own deadline; the helper keeps tighter ones (ModuleCall). Its exit status is the
// PAM status it decided, which is always PAM_IGNORE: Keygate never decides a login.
internal import CPAM
import KeygateCore

@main
enum HelperMain {
    static func main() {
        let handle: ModuleHandle
        do {
            handle = try ModuleHandle.readRequest()
        } catch {
            HelperOutput.write("log \(LogPriority.error) " + HelperOutput.oneLine("\(error) (the login goes on without Keygate)"))
            ProcessExit.now(PAM_IGNORE)
        }
        // The helper's one read of its environment (the module starts it with an empty one), passed down.
        let environment = KeygateEnvironment.process()
        let status: Int32
        switch handle.phase {
        case "auth": status = ModuleCall.run(handle, environment: environment, Authenticate.run)
        case "open": status = ModuleCall.run(handle, environment: environment) { try OpenSession.run($0, counting: true) }
        case "close": status = ModuleCall.run(handle, environment: environment) { try CloseSession.run($0, counting: true) }
        // The module counted the session itself (SessionFile) and found the keychain locked.
        case "unlock": status = ModuleCall.run(handle, environment: environment) { try OpenSession.run($0, counting: false) }
        // The module counted the session itself, and it was the user's last.
        case "lock": status = ModuleCall.run(handle, environment: environment) { try CloseSession.run($0, counting: false) }
        case "passwd": status = ModuleCall.run(handle, environment: environment, ChangePassword.run)
        default:
            HelperOutput.write("log \(LogPriority.error) unknown phase '\(HelperOutput.oneLine(handle.phase))' from pam_keygate.so: reinstall keygate")
            status = PAM_IGNORE
        }
        ProcessExit.now(status)
    }
}
