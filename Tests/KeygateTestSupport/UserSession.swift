// Runs shell scripts as a TestUser, the way a person at a headless login
// would: a clean environment, no controlling terminal, and the user's own
// D-Bus session with gnome-keyring. It delegates the user switch to runuser,
// the new session to setsid and the keyring to scripts/secret-session, run
// from a world-readable copy (a checkout under /root is unreadable to others).
import Foundation

/// Runs a shell script as the user inside its own private secret-session, with a clean environment
/// (env -i HOME PATH plus `environment`), the keygate binary and a given folder world-readable.
public enum UserSession {
    /// Copies the built keygate binary (PackagePaths.keygateBinary) and scripts/secret-session into a fresh
    /// world-readable temp dir and returns its path (cached per test process). Where keygate is not built,
    /// a stand-in that says so (and exits 127) takes its place.
    public static func stageTools() throws -> String {
        try staged.get()
    }

    /// Runs `script` with bash as `user`, through `runuser -u USER -- env -i ... keyctl session - setsid -w
    /// secret-session` (a session keyring of its own, as a login has).
    /// The environment is HOME, USER, LOGNAME and PATH (the staged tools first, so the script can call
    /// `keygate` and `secret-session`), plus `environment`, which wins on a clash. The user's login keyring
    /// has an empty password (an unencrypted keyring in the throwaway home) and persists between calls.
    /// Standard input is `stdin`, or /dev/null.
    /// `wrapper`: a command line run as root around the whole session (`unshare --mount …`), ending in "$@".
    /// `session`: the staged session script the run starts in: `secret-session` (gnome-keyring), or
    /// `keygate-secret-session` (Keygate's own keygate-secret-service alone on a private bus).
    public static func run(as user: TestUser, script: String, environment: [String: String] = [:],
                           stdin: Data? = nil, timeout: TimeInterval = 120, wrapper: [String] = [],
                           session: String = "secret-session") throws -> ProcessResult {
        let tools = try stageTools()
        var env: [String: String] = [
            "HOME": user.home,
            "USER": user.name,
            "LOGNAME": user.name,
            "PATH": "\(tools):/usr/local/bin:/usr/bin:/bin",
        ]
        // The suite's store pass (make check runs it again with KEYGATE_STORE=embedded).
        if let store = ProcessInfo.processInfo.environment["KEYGATE_STORE"], !store.isEmpty { env["KEYGATE_STORE"] = store }
        env.merge(environment) { _, given in given }
        let assignments = env.keys.sorted().map { "\($0)=\(env[$0] ?? "")" }
        // A session keyring of its own (`keyctl session -`), as pam_keyinit's force gives a login: else
        // the run inherits this process's session keyring, and once anything in this process has made
        // that explicit, runuser's pam_keyinit keeps root's for the user. keyctl's "Joined session
        // keyring" line goes to /dev/null; the program gets the real standard output back (fd 3).
        let joinSession = "exec keyctl session - sh -c 'exec 1>&3 3>&-; exec \"$@\"' keygate-session \"$@\" 3>&1 >/dev/null"
        let argv = wrapper + ["runuser", "-u", user.name, "--", "env", "-i"] + assignments
            + ["sh", "-c", joinSession, "keygate-session",
               "setsid", "-w", tools + "/" + session, "bash", "-c", script, "keygate-user-session"]
        return try Subprocess.run(argv, stdin: stdin, environment: TestUser.systemEnvironment,
                                  currentDirectory: "/", timeout: timeout)
    }

    private static let staged: Result<String, any Error> = Result { try makeStagingFolder() }

    private static func makeStagingFolder() throws -> String {
        let fm = FileManager.default
        var template = Array((NSTemporaryDirectory() + "/keygate-tools.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else {
            throw TestUserError(description: "cannot create a staging folder in \(NSTemporaryDirectory())")
        }
        let folder = String(cString: made)
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder)

        try copy(PackagePaths.scripts + "/secret-session", to: folder + "/secret-session")
        try copy(PackagePaths.scripts + "/keygate-secret-session", to: folder + "/keygate-secret-session")
        // Keygate's own Secret Service, where it was built (keygate-secret-session finds it beside itself).
        if fm.isExecutableFile(atPath: PackagePaths.secretServiceBinary) {
            try copy(PackagePaths.secretServiceBinary, to: folder + "/keygate-secret-service")
        }
        let binary = PackagePaths.keygateBinary
        if fm.isExecutableFile(atPath: binary) {
            try copy(binary, to: folder + "/keygate")
        } else {
            let standIn = "#!/bin/sh\necho \"keygate was not built (looked for \(binary)): run swift build\" >&2\nexit 127\n"
            try Data(standIn.utf8).write(to: URL(fileURLWithPath: folder + "/keygate"))
            try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder + "/keygate")
        }
        // keygate finds its gatekeeper beside itself (a test-hook build), setuid root as installed.
        if BuiltGatekeeper.isBesideTheBuild {
            try copy(BuiltGatekeeper.path, to: folder + "/keygate-gatekeeper")
            if getuid() == 0 {
                _ = chown(folder + "/keygate-gatekeeper", 0, 0)
                _ = chmod(folder + "/keygate-gatekeeper", 0o4755)
            }
        }
        stagedFolderForCleanup.withLock { $0 = folder }
        atexit { stagedFolderForCleanup.withLock { folder in if let folder { _ = try? FileManager.default.removeItem(atPath: folder) } } }
        return folder
    }

    private static func copy(_ source: String, to destination: String) throws {
        let fm = FileManager.default
        guard fm.fileExists(atPath: source) else {
            throw TestUserError(description: "cannot stage \(source): it does not exist")
        }
        try fm.copyItem(atPath: source, toPath: destination)
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: destination)
    }
}

private let stagedFolderForCleanup = LockedValue<String?>(nil)

