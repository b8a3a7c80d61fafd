// Where keygate-gatekeeper is (docs/GATEKEEPER.md): beside the running program's
// libexec (<prefix>/bin/keygate -> <prefix>/libexec/keygate/keygate-gatekeeper), else the
// packaged and `make install` places. Test-hook builds also take KEYGATE_TEST_GATEKEEPER
// (TestHooks, in the KeygateEnvironment passed down) and a gatekeeper in the running program's
// own folder (SwiftPM's build folder).

enum GatekeeperLocator {
    static let name = "keygate-gatekeeper"
    static let installedPaths = ["/usr/libexec/keygate/keygate-gatekeeper", "/usr/local/libexec/keygate/keygate-gatekeeper"]

    /// The gatekeeper to run, or .notAvailable saying how to install it.
    static func path(environment: KeygateEnvironment) throws -> String {
        for candidate in candidates(environment: environment) where isExecutable(candidate) { return candidate }
        throw KeychainError.notAvailable("""
            Keygate's gatekeeper (keygate-gatekeeper) is not installed, so no item with access control can be opened or sealed: \
            install the keygate package, or run `sudo make install` (it installs it setuid root in <prefix>/libexec/keygate); \
            `keygate doctor` checks it
            """)
    }

    static func candidates(environment: KeygateEnvironment) -> [String] {
        var out: [String] = []
        if let path = environment.testHooks.gatekeeper { out.append(path) }
        if TestHooks.compiledIn, let folder = executableFolder() { out.append(folder + "/" + name) }
        if let folder = executableFolder() {
            let prefix = folder.hasSuffix("/bin") ? String(folder.dropLast(4)) : folder + "/.."
            out.append(prefix + "/libexec/keygate/" + name)
        }
        return out + installedPaths
    }

    /// Whether the gatekeeper at `path` can act for a user other than root: a regular file,
    /// owned by root, setuid. (Root needs no setuid bit.)
    static func isSetuidRoot(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow) else { return false }
        return info.uid == 0 && (info.mode & 0o4000 /* S_ISUID */) != 0
    }

    private static func isExecutable(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow) else { return false }
        return info.isRegular && FileSystem.allows(.executable, path)
    }

    private static func executableFolder() -> String? {
        guard let path = FileSystem.linkTarget("/proc/self/exe") else { return nil }
        guard let slash = path.lastIndex(of: "/") else { return nil }
        return String(path[..<slash])
    }
}
