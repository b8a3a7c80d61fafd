// Doctor check: keygate-gatekeeper, the setuid-root helper (docs/GATEKEEPER.md), where
// GatekeeperLocator finds it (its candidates, in its order: the first executable one is
// the one keygate runs). It must be a regular file owned by root with the setuid bit,
// writable by root alone, in folders only root can change (from / down): otherwise it
// cannot act for other users, or anyone who can write it or rename it away becomes root.
// Read-only: lstat and realpath, never opens or runs the helper.

enum GatekeeperCheck {
    static let name = "gatekeeper"
    static let installAdvice = """
        install the keygate package, or run `sudo make install` in the source tree (it installs \(GatekeeperLocator.name) \
        setuid root in <prefix>/libexec/keygate)
        """

    /// `candidates` is GatekeeperLocator's list; tests pass their own.
    static func run(candidates: [String]) -> DiagnosticResult {
        guard let found = candidates.first(where: isExecutable) else {
            if let present = candidates.first(where: FileProbe.exists) {
                return DiagnosticResult(name, .fail, """
                    \(present) is there but is not an executable file for uid \(FileProbe.uid), so no item with access control can be \
                    opened through it
                    """,
                                        advice: "sudo chown root:root \(present) && sudo chmod 4755 \(present), or reinstall: " + installAdvice)
            }
            return DiagnosticResult(name, .fail, """
                \(GatekeeperLocator.name) is not installed (looked in \(candidates.joined(separator: ", "))), so no item with \
                access control can be opened
                """,
                                    advice: installAdvice)
        }
        // What exec runs: the file a link points at, checked with its own folders.
        let path = realPath(found) ?? found
        let shown = path == found ? path : "\(found) (-> \(path))"
        guard case .found(let info) = FileProbe.inspect(path), info.kind == .regular else {
            return DiagnosticResult(name, .fail, "\(shown) is not a regular file", advice: "remove it, then " + installAdvice)
        }
        let mode = "0" + String(info.mode, radix: 8)
        if info.mode & 0o022 != 0 {
            return DiagnosticResult(name, .fail, """
                \(shown) (mode \(mode)) is writable by its group or by everyone: any of them can make it run their code as root
                """,
                                    advice: "sudo chmod go-w \(path), then reinstall it (its contents cannot be trusted): " + installAdvice)
        }
        if let folder = unsafeFolder(of: path) {
            return DiagnosticResult(name, .fail, """
                \(folder.path), a folder above \(shown), \(folder.why): whoever can change it can put another program in the \
                gatekeeper's place
                """,
                                    advice: """
                                        sudo chown root:root \(folder.path) && sudo chmod go-w \(folder.path), then reinstall the gatekeeper:\u{20}
                                        """ + installAdvice)
        }
        if info.uid != 0 {
            return DiagnosticResult(name, FileProbe.uid == 0 ? .warn : .fail, """
                \(shown) is owned by uid \(info.uid), not root, so it cannot act for other users (items with access control cannot \
                be opened)
                """,
                                    advice: """
                                        sudo chown root:root \(path) && sudo chmod 4755 \(path) (chown clears the setuid bit, so chmod after it)
                                        """)
        }
        if info.mode & 0o4000 == 0 {
            return DiagnosticResult(name, FileProbe.uid == 0 ? .warn : .fail, """
                \(shown) (mode \(mode)) is not setuid, so it runs as its caller and cannot read root's gate keys for other users
                """,
                                    advice: "sudo chmod 4755 \(path)")
        }
        return DiagnosticResult(name, .ok, "\(shown), root, mode \(mode) (setuid)")
    }

    /// The first folder from `path`'s up to / that is not root's or that others may write
    /// (a sticky folder such as /tmp is safe: others cannot rename root's entries in it).
    static func unsafeFolder(of path: String) -> (path: String, why: String)? {
        var folder = path
        while let slash = folder.lastIndex(of: "/") {
            folder = slash == folder.startIndex ? "/" : String(folder[..<slash])
            switch FileProbe.inspect(folder) {
            case .found(let info):
                if info.uid != 0 { return (folder, "is owned by uid \(info.uid), not root") }
                if info.mode & 0o022 != 0 && info.mode & 0o1000 == 0 {
                    return (folder, "is writable by its group or by everyone (mode 0\(String(info.mode, radix: 8)))")
                }
            case .absent, .denied, .error:
                return (folder, "cannot be inspected")
            }
            if folder == "/" { return nil }
        }
        return nil
    }

    private static func isExecutable(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow) else { return false }
        return info.isRegular && FileSystem.allows(.executable, path)
    }

    private static func realPath(_ path: String) -> String? {
        FileSystem.resolvedPath(path)
    }
}
