// A snapshot of the process environment as a dictionary, read once through
// `environ` so the library does not need Foundation's ProcessInfo.
internal import Glibc

public enum ProcessEnvironment {
    public static func snapshot() -> [String: String] {
        var out: [String: String] = [:]
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") {
                out[String(s[s.startIndex..<eq])] = String(s[s.index(after: eq)...])
            }
            p += 1
        }
        return out
    }
}
