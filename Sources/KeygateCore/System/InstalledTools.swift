// Where Keygate's helper programs are installed, for messages that tell a person what to
// run: `make install` and the .deb put them in <prefix>/libexec/keygate/. The prefix is the
// running binary's (/proc/self/exe, one folder up from bin/), else the .deb's and make
// install's defaults; a source-tree build names the script in the checkout. Looked up once,
// only when a message needs it.
internal import Glibc

package enum InstalledTools {
    /// scripts/secret-session as installed: a private D-Bus session with gnome-keyring.
    package static let secretSession: String = locate("secret-session")

    static func locate(_ tool: String) -> String {
        var candidates: [String] = []
        if let exe = executablePath() {
            let prefix = parent(parent(exe))
            candidates.append(prefix + "/libexec/keygate/" + tool)
        }
        candidates += ["/usr/libexec/keygate/" + tool, "/usr/local/libexec/keygate/" + tool]
        for path in candidates where access(path, X_OK) == 0 { return path }
        return "/usr/libexec/keygate/\(tool) (installed with Keygate; scripts/\(tool) in its source)"
    }

    private static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
