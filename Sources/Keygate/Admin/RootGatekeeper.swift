// Root's administration that lives in root's program: the library asks the installed
// keygate-gatekeeper to do it (`keygate forget-user` runs `keygate-gatekeeper --forget-user`),
// so the code that removes root's state is not in the library that apps link
// (KeygateGatekeeper/ForgetUser). Located as every gatekeeper call locates it
// (GatekeeperLocator); its output goes straight to this process's standard output and error.
internal import KeygateGateWire

public enum RootGatekeeper {
    /// Runs the gatekeeper with `arguments` (one of its root-only modes) and waits for it; its exit
    /// status. Throws .param for anyone but root (the gatekeeper refuses them too), and
    /// .notAvailable when it cannot be found or started.
    public static func run(_ arguments: [String], environment: KeygateEnvironment) throws -> Int32 {
        guard ProcessIdentity.uid == 0, ProcessIdentity.euid == 0 else {
            throw KeychainError.param("this runs as root only (it changes root's state): run it with sudo")
        }
        let path = try GatekeeperLocator.path(environment: environment)
        switch Spawn([path] + arguments).start() {
        case .success(let child):
            switch child.wait() {
            case .success(let exit): return exit.shellStatus
            case .failure(let e): throw KeychainError.notAvailable("could not wait for \(path): \(e.text)")
            }
        case .failure(let e):
            throw KeychainError.notAvailable("Keygate's gatekeeper \(path) could not be started (\(e.text)): reinstall keygate")
        }
    }
}
