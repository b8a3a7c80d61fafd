// The helper's log: lines for pam_syslog(3) ("log PRIORITY TEXT" on standard output,
// which pam_keygate.so passes on, so they read "pam_keygate(sshd:auth): ..."), with
// debug lines only under the `debug` option. Messages are built lazily and never carry
// a secret. All but the debug lines are also kept in root's audit record (GateAuditFile),
// which does not depend on syslog.
import KeygateCore
import KeygateGatekeeper

struct ModuleLog {
    let debugEnabled: Bool
    /// The helper's environment (its main's KeygateEnvironment): where a test-hook build keeps root's record.
    let environment: KeygateEnvironment

    func error(_ message: @autoclosure () -> String) { keep(LogPriority.error, message()) }
    func warning(_ message: @autoclosure () -> String) { keep(LogPriority.warning, message()) }
    func notice(_ message: @autoclosure () -> String) { keep(LogPriority.notice, message()) }

    func debug(_ message: @autoclosure () -> String) {
        guard debugEnabled else { return }
        write(LogPriority.debug, message())
    }

    /// To pam_syslog, and to root's audit record (GateAuditFile), which no syslog outage loses.
    private func keep(_ priority: Int32, _ message: String) {
        write(priority, message)
        let name = priority == LogPriority.error ? "err" : priority == LogPriority.warning ? "warning" : "notice"
        GateAuditFile.appendModuleLine(HelperOutput.oneLine(message), priority: name, environment: environment)
    }

    private func write(_ priority: Int32, _ message: String) {
        HelperOutput.write("log \(priority) " + HelperOutput.oneLine(message))
    }
}
