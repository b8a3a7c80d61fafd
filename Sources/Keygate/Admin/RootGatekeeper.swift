// Root's requests to the installed gatekeeper, for root's administration in the keygate CLI:
// its root-only modes (`keygate forget-user` runs `keygate-gatekeeper --forget-user`, so the
// code that removes root's state is not in the library that apps link: KeygateGatekeeper's
// ForgetUser), and root's seals on another user's class keys (the host protector's
// passwordless keychains, KeygateCLI's HostProtectorAdmin). Located as every gatekeeper call
// locates it (GatekeeperLocator); a mode's output goes straight to this process's own.
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

    /// Root only: the gatekeeper's seals on the class public keys of `master` for the user `uid`,
    /// with no authentication (a keychain with no password cannot authenticate: HostProtectorAdmin).
    /// The gatekeeper refuses this request from anyone but root.
    package static func sealsForUser(_ uid: UInt32, master: SecureBytes, prompter: any Prompter,
                             environment: KeygateEnvironment) throws -> [Accessibility: [UInt8]] {
        let request = GateRequest(.certify(.init(classKeys: try GateAccess.classKeys(of: master), subjectUID: uid)), noPrompt: true)
        guard case .certify(let sealed) = try GateClient(prompter: prompter, environment: environment).call(request).result else {
            throw KeychainError.notAvailable("Keygate's gatekeeper answered another request than the one asked: reinstall keygate")
        }
        var seals: [Accessibility: [UInt8]] = [:]
        for seal in sealed { seals[seal.accessibility] = seal.seal }
        return seals
    }
}
