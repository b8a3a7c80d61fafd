// A snapshot of the process environment as a dictionary, read once through
// `environ` so the library does not need Foundation's ProcessInfo. Each entry is split at
// its first `=` as bytes: searching a String for a Character walks grapheme clusters, which
// costs a read ~0.2 M instructions for three snapshots.
//
// The last snapshot is kept with the environment's bytes: a later call while the environment
// is byte for byte the same returns it without building the dictionary again (a `get` asks
// three times: the CLI, the keychain context, the store choice).
internal import Glibc
import Synchronization

public enum ProcessEnvironment {
    private static let last = Mutex<(bytes: [UInt8], values: [String: String])?>(nil)

    public static func snapshot() -> [String: String] {
        let bytes = environmentBytes()
        if let kept = last.withLock({ $0 }), kept.bytes == bytes { return kept.values }
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let entryBytes = UnsafeRawBufferPointer(start: entry, count: strlen(entry))
            if let eq = entryBytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: entryBytes[..<eq]), as: UTF8.self)
                out[name] = String(decoding: UnsafeRawBufferPointer(rebasing: entryBytes[(eq + 1)...]), as: UTF8.self)
            }
            p += 1
        }
        last.withLock { $0 = (bytes, out) }
        return out
    }

    /// The one variable `name`, read without building the dictionary: for a program's first
    /// question before it knows it will run a command (`keygate --version` builds no snapshot).
    public static func variable(_ name: String) -> String? {
        let wanted = Array(name.utf8) + [UInt8(ascii: "=")]
        var p = environ
        while let entry = p.pointee {
            let entryBytes = UnsafeRawBufferPointer(start: entry, count: strlen(entry))
            if entryBytes.starts(with: wanted) {
                return String(decoding: UnsafeRawBufferPointer(rebasing: entryBytes[wanted.count...]), as: UTF8.self)
            }
            p += 1
        }
        return nil
    }

    /// The environment's bytes, entry after entry, each ended by a NUL: what a snapshot was
    /// taken from, compared exactly (cheaper than a dictionary).
    public static func environmentBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096)
        var p = environ
        while let entry = p.pointee {
            out.append(contentsOf: UnsafeRawBufferPointer(start: entry, count: strlen(entry) + 1))
            p += 1
        }
        return out
    }
}
