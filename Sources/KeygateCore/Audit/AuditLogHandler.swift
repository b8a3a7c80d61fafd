// Where audit records go: the backend protocol (swift-log's LogHandler, for AuditRecord)
// and the two backends a program uses, syslog (authpriv) and stderr. Delegates to
// syslog(3) through System's Syslog and to standard error through Descriptor.write.

/// A backend for AuditLog: receives each record, already built, and writes it somewhere.
public protocol AuditLogHandler: Sendable {
    func log(_ record: AuditRecord)
}

/// Syslog, facility authpriv: failures, lockouts and refusals as warnings, the rest as notices.
public struct SyslogAuditHandler: AuditLogHandler {
    public init() {}

    public func log(_ record: AuditRecord) {
        Syslog.authpriv(record.event.isWarning ? .warning : .notice, record.line)
    }

    /// Makes this process log as "keygate[PID]" (openlog).
    static func identifyAsKeygate() {
        Syslog.identifyAsKeygate()
    }
}

/// Standard error, one `keygate: audit: LINE` per record (the CLI's --verbose).
public struct StandardErrorAuditHandler: AuditLogHandler {
    public init() {}

    public func log(_ record: AuditRecord) {
        Descriptor.write("keygate: audit: \(record.line)\n", to: 2)
    }
}
