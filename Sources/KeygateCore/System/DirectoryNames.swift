// The names in an open folder (readdir(3)), without "." and "..", in the order the file
// system gives them. Used where Keygate walks a folder of its own choosing: the keychain
// context's change check (KeychainContext) and fprintd's print storage (EnrolledPrints).
internal import Glibc

package enum DirectoryNames {
    /// Every entry's name in `dir`, read to its end.
    package static func read(_ dir: OpaquePointer) -> [String] {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
