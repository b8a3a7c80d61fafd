// Where Keygate's helper programs are installed, for messages that tell a person what to
// run: `make install` and the .deb put them in <prefix>/libexec/keygate/. The prefix is the
// running binary's (/proc/self/exe, one folder up from bin/), else the .deb's and make
// install's defaults; a source-tree build names the script in the checkout. Looked up once,
// only when a message needs it.

package enum InstalledTools {
    /// scripts/secret-session as installed: a private D-Bus session with gnome-keyring.
    package static let secretSession: String = locate("secret-session")
    /// contrib/systemd/keygate-secret-service.service as installed (an example in the doc folder).
    package static let secretServiceUnit: String = example("keygate-secret-service.service", source: "contrib/systemd")

    /// An example file as this install placed it: `<prefix>/share/doc/keygate/examples/NAME` under the
    /// running binary's prefix (`make install`: /usr/local), then the .deb's /usr/share/doc; else
    /// where the source tree has it, saying where each layout installs it.
    static func example(_ name: String, source folder: String) -> String {
        var candidates: [String] = []
        if let exe = executablePath() { candidates.append(parent(parent(exe)) + "/share/doc/keygate/examples/" + name) }
        candidates += ["/usr/share/doc/keygate/examples/" + name, "/usr/local/share/doc/keygate/examples/" + name]
        for path in candidates where FileSystem.allows(.readable, path) { return path }
        return "\(folder)/\(name) in Keygate's source (installed as /usr/share/doc/keygate/examples/\(name) by the .deb, "
            + "/usr/local/share/doc/keygate/examples/\(name) by make install)"
    }

    static func locate(_ tool: String) -> String {
        var candidates: [String] = []
        if let exe = executablePath() {
            let prefix = parent(parent(exe))
            candidates.append(prefix + "/libexec/keygate/" + tool)
        }
        candidates += ["/usr/libexec/keygate/" + tool, "/usr/local/libexec/keygate/" + tool]
        for path in candidates where FileSystem.allows(.executable, path) { return path }
        return "/usr/libexec/keygate/\(tool) (the .deb; /usr/local/libexec/keygate/\(tool) after make install; "
            + "scripts/\(tool) in its source)"
    }

    private static func executablePath() -> String? {
        FileSystem.linkTarget("/proc/self/exe")
    }

    private static func parent(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
