// The system log, facility authpriv (syslog(3) and openlog(3), through CSystem's non-variadic
// wrappers): the audit trail's default backend (SyslogAuditHandler).
internal import CSystem

package enum Syslog {
    /// How a line is marked.
    package enum Level: Sendable { case notice, warning }

    /// One line to authpriv at `level`.
    package static func authpriv(_ level: Level, _ line: String) {
        let priority = level == .warning ? keygate_log_authpriv_warning() : keygate_log_authpriv_notice()
        keygate_syslog(priority, line)
    }

    /// Makes this process log as "keygate[PID]" (openlog).
    package static func identifyAsKeygate() {
        keygate_openlog()
    }
}
