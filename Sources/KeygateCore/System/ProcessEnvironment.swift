// A snapshot of the process environment as a dictionary, read once through
// `environ` so the library does not need Foundation's ProcessInfo. Each entry is split at
// its first `=` as bytes: searching a String for a Character walks grapheme clusters, and
// cost a read ~0.2 M instructions for three snapshots (issue 19).
internal import Glibc

public enum ProcessEnvironment {
    public static func snapshot() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let bytes = UnsafeRawBufferPointer(start: entry, count: strlen(entry))
            if let eq = bytes.firstIndex(of: UInt8(ascii: "=")) {
                let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<eq]), as: UTF8.self)
                out[name] = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(eq + 1)...]), as: UTF8.self)
            }
            p += 1
        }
        return out
    }
}
