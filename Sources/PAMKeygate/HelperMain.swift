// keygate-pam-helper: the heavy half of pam_keygate.so (issue 15), in the manner of
// unix_chkpwd and gnome-keyring-daemon --login. The thin module (Sources/PAMKeygateModule)
// starts it for each PAM call, with an empty environment, writes the request (phase,
// PAM items, options, passwords) on its standard input and relays what it prints
// (log lines, one PAM_TEXT_INFO line) to pam_syslog and pam_info. The module kills it at
// its own deadline; the helper keeps tighter ones (ModuleCall). Its exit status is the
// PAM status it decided, which is always PAM_IGNORE: Keygate never decides a login.
internal import CPAM
import Keygate

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
        case "open": status = ModuleCall.run(handle, environment: environment, OpenSession.run)
        case "close": status = ModuleCall.run(handle, environment: environment, CloseSession.run)
        case "passwd": status = ModuleCall.run(handle, environment: environment, ChangePassword.run)
        default:
            HelperOutput.write("log \(LogPriority.error) unknown phase '\(HelperOutput.oneLine(handle.phase))' from pam_keygate.so: reinstall keygate")
            status = PAM_IGNORE
        }
        ProcessExit.now(status)
    }
}
