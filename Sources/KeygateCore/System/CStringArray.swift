// A NULL-terminated array of strdup'd C strings for argv and envp of a spawned
// program (askpass, pinentry, `keygate exec`'s command); freed in deinit. Never used
// for a secret.
internal import Glibc

package final class CStringArray {
    package let pointers: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>
    private let count: Int

    package init(_ strings: [String]) {
        count = strings.count
        pointers = .allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
    }

    /// C strings with exactly these bytes (argv entries that need not be UTF-8); each is
    /// NUL-terminated here, so none may contain a NUL.
    package init(bytes entries: [[UInt8]]) {
        count = entries.count
        pointers = .allocate(capacity: entries.count + 1)
        for (index, entry) in entries.enumerated() {
            let copy = UnsafeMutablePointer<CChar>.allocate(capacity: entry.count + 1)
            entry.withUnsafeBytes { source in
                UnsafeMutableRawPointer(copy).copyMemory(from: source.baseAddress ?? UnsafeRawPointer(copy), byteCount: entry.count)
            }
            copy[entry.count] = 0
            pointers[index] = copy
        }
        pointers[entries.count] = nil
    }

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
