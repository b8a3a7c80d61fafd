// Root's records (GateRecords) kept by the gatekeeper's daemon between requests: each
// user's records as last read or written, with the file's FileVersion. GateRecords.update
// uses a copy only while the file keeps that version, checked under the records lock that
// every writer (the daemon and the setuid helper) takes, so `keygate lock`, a lockout or
// an authentication the helper recorded counts at the next request. Off
// everywhere else: the helper runs once.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
import Synchronization

enum GateRecordsCache {
    /// At most this many users are kept; beyond it the cache starts again.
    static let capacity = 4096

    /// nil: caching is off (the default).
    private static let entries = Mutex<[UInt32: (version: FileVersion, records: GateRecords)]?>(nil)

    /// Turns caching on for this process (the daemon, before its first request).
    static func enable() {
        entries.withLock { if $0 == nil { $0 = [:] } }
    }

    static func lookup(uid: UInt32, _ version: FileVersion) -> GateRecords? {
        entries.withLock { entries in
            guard let entry = entries?[uid], entry.version == version else { return nil }
            return entry.records
        }
    }

    static func store(uid: UInt32, _ version: FileVersion?, _ records: GateRecords) {
        entries.withLock { entries in
            guard entries != nil else { return }
            guard let version else {
                entries?[uid] = nil
                return
            }
            if let count = entries?.count, count >= capacity, entries?[uid] == nil { entries = [:] }
            entries?[uid] = (version, records)
        }
    }
}
