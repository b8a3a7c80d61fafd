// The helper's log: lines for pam_syslog(3) ("log PRIORITY TEXT" on standard output,
// which pam_keygate.so passes on, so they read "pam_keygate(sshd:auth): ..."), with
// debug lines only under the `debug` option. Messages are built lazily and never carry
// a secret.
internal import Glibc

struct ModuleLog {
    let debugEnabled: Bool

    func error(_ message: @autoclosure () -> String) { write(LOG_ERR, message()) }
    func warning(_ message: @autoclosure () -> String) { write(LOG_WARNING, message()) }
    func notice(_ message: @autoclosure () -> String) { write(LOG_NOTICE, message()) }

    func debug(_ message: @autoclosure () -> String) {
        guard debugEnabled else { return }
        write(LOG_DEBUG, message())
    }

    private func write(_ priority: Int32, _ message: String) {
        HelperOutput.write("log \(priority) " + HelperOutput.oneLine(message))
    }
}
