// Parsed policy files kept by a long-running process (the gatekeeper's daemon, which reads
// the item's policy on every request): a file is parsed again as soon as anything about it
// changes (its FileVersion, from the open file). The owner and mode checks of
// PolicyFileReader still run on every read; only the parse is saved. Off everywhere else:
// a CLI run reads each file once anyway.
import Synchronization

package enum ParsedFileCache {
    private struct Entries {
        var byPath: [String: (version: FileVersion, parsed: ParsedPolicy)] = [:]
        var order: [String] = []
    }

    /// At most this many files are kept (every user's own files count); the oldest go first.
    static let capacity = 512

    /// nil: caching is off (the default).
    private static let entries = Mutex<Entries?>(nil)

    /// Turns caching on for this process (the daemon, before its first request).
    package static func enable() {
        entries.withLock { if $0 == nil { $0 = Entries() } }
    }

    static func lookup(_ path: String, _ version: FileVersion) -> ParsedPolicy? {
        entries.withLock { entries in
            guard let entry = entries?.byPath[path], entry.version == version else { return nil }
            return entry.parsed
        }
    }

    static func store(_ path: String, _ version: FileVersion, _ parsed: ParsedPolicy) {
        entries.withLock { entries in
            guard entries != nil else { return }
            if entries?.byPath[path] == nil { entries?.order.append(path) }
            entries?.byPath[path] = (version, parsed)
            while let count = entries?.order.count, count > capacity, let oldest = entries?.order.removeFirst() {
                entries?.byPath[oldest] = nil
            }
        }
    }
}
