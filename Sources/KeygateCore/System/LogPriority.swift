// syslog(3)'s priorities by name, for the lines keygate-pam-helper hands to pam_syslog
// ("log PRIORITY TEXT"). Writing to syslog itself is CSystem's (AuditLogHandler).
internal import Glibc

package enum LogPriority {
    package static let error = LOG_ERR
    package static let warning = LOG_WARNING
    package static let notice = LOG_NOTICE
    package static let debug = LOG_DEBUG
}
