// An audit backend that keeps the records in memory, in order, for tests: install it with
// AuditLog.bootstrap and read what was recorded, instead of reading syslog or stderr.
import Synchronization

/// Keeps every record it is given (for tests).
public final class InMemoryAuditHandler: AuditLogHandler {
    private let stored = Mutex<[AuditRecord]>([])

    public init() {}

    public func log(_ record: AuditRecord) {
        stored.withLock { $0.append(record) }
    }

    /// The records so far, oldest first.
    public var records: [AuditRecord] {
        stored.withLock { $0 }
    }
}
