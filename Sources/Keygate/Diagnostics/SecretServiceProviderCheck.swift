// Doctor check (and `keygate init`'s note): which program answers org.freedesktop.secrets on the
// session bus, whether it is Keygate's own keygate-secret-service (libsecret programs then use
// this keychain), and, when nobody owns the name, which activation file the bus would start: the
// first org.freedesktop.secrets file in its folders, searched as dbus 1.14 searches them
// ($XDG_RUNTIME_DIR, $XDG_DATA_HOME, each of $XDG_DATA_DIRS, /usr/share, then the folders that
// session.d snippets add, such as Keygate's own). Asks the bus daemon only (no activation).
//
// Delegates: the owner to KeygateStorage's SecretServiceConnection, files to System/.

enum SecretServiceProviderCheck {
    static let name = "secret-service-provider"

    /// Nil where the session bus cannot be reached (the session-bus check says why).
    static func run(environment: KeygateEnvironment) -> DiagnosticResult? {
        guard let (text, _) = describe(environment: environment) else { return nil }
        return DiagnosticResult(name, .ok, text)
    }

    /// One line saying who answers, and whether it is Keygate's; nil when there is no bus to ask.
    package static func describe(environment: KeygateEnvironment) -> (text: String, isKeygate: Bool)? {
        guard let address = BusServer.sessionBusAddress(environment), (try? BusServer(address: address)) != nil else { return nil }
        let provider = SecretServiceConnection(environment: environment).provider(ServiceDeadline(.seconds(2)))
        switch provider {
        case .keygate:
            return ("org.freedesktop.secrets is Keygate's own (keygate-secret-service): libsecret programs use this keychain", true)
        case .unknown:
            guard let file = activationFile(environment: environment) else {
                return ("nobody owns org.freedesktop.secrets, and no activation file names it: libsecret programs find no Secret "
                        + "Service (Keygate's: see docs/SECRET_SERVICE.md)", false)
            }
            let keygate = file.exec.contains("keygate-secret-service")
            return ("nobody owns org.freedesktop.secrets now; the bus would start \(file.exec) (\(file.path))"
                    + (keygate ? ": Keygate's own" : ": not Keygate's (to choose Keygate's: docs/SECRET_SERVICE.md)"), keygate)
        default:
            return ("org.freedesktop.secrets is \(provider.name), not Keygate's: libsecret programs use its keyrings "
                    + "(to serve them from this keychain: docs/SECRET_SERVICE.md)", false)
        }
    }

    /// The activation file the session bus would use for org.freedesktop.secrets, and its Exec line.
    static func activationFile(environment: KeygateEnvironment) -> (path: String, exec: String)? {
        var folders: [String] = []
        if let runtime = environment.runtimeDirectory { folders.append(runtime + "/dbus-1/services") }
        let home = environment.home ?? ""
        folders.append((environment.dataHome ?? home + "/.local/share") + "/dbus-1/services")
        for dir in environment.dataDirectories ?? ["/usr/local/share", "/usr/share"] {
            folders.append(dir + "/dbus-1/services")
        }
        folders.append("/usr/share/dbus-1/services")
        // Folders added by session.d snippets come after the standard ones.
        for snippet in FileProbe.glob("/usr/share/dbus-1/session.d/*.conf") + FileProbe.glob("/etc/dbus-1/session.d/*.conf") {
            guard let text = FileProbe.readText(snippet) else { continue }
            for piece in text.split(separator: "<servicedir>", omittingEmptySubsequences: false).dropFirst() {
                guard let end = piece.firstRange(of: "</servicedir>") else { continue }
                folders.append(String(piece[..<end.lowerBound]).trimmingCharacters(in: " \n\t"))
            }
        }
        for folder in folders {
            for file in FileProbe.glob(folder + "/*.service").sorted() {
                guard let text = FileProbe.readText(file) else { continue }
                let lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: " \t\r") }
                guard lines.contains("Name=org.freedesktop.secrets") else { continue }
                let exec = lines.first { $0.hasPrefix("Exec=") }.map { String($0.dropFirst(5)) } ?? "?"
                return (file, exec)
            }
        }
        return nil
    }
}

private extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let first = s.first, set.contains(first) { s = s.dropFirst() }
        while let last = s.last, set.contains(last) { s = s.dropLast() }
        return String(s)
    }
}

private extension Substring {
    func trimmingCharacters(in set: String) -> String { String(self).trimmingCharacters(in: set) }
}
