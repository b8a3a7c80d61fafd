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

    deinit {
        for index in 0..<count { free(pointers[index]) }
        pointers.deallocate()
    }
}
