// A throwaway keychain for root in a temporary folder, for tests that run the real keygate
// binary as root (who derives the device key from the host key directly): its own HOME and
// XDG_DATA_HOME, a host key at a temporary path (test-hook builds read KEYGATE_TEST_HOST_KEY),
// the empty policy root, the fast KDF, and an askpass that answers the test password and
// logs each prompt. PAM is a pam_matrix service in a temporary confdir, so root's real
// password is never involved. Used by ThisDeviceOnlyTests and TPMHostKeyTests.
import Foundation

public final class RootKeychainSandbox {
    public static let password = "root-test-pw"

    public let directory: String
    public let pam: PAMMatrix

    /// Where the host key lives (a sealed one at this path + ".tpm").
    public var hostKeyPath: String { directory + "/hostkey/host.key" }
    /// One line per password prompt answered.
    public var promptLog: String { directory + "/prompts" }

    public init(prefix: String) throws {
        try Requirement.require(Requirement.isRoot, "root, who derives the device key from the host key (CI runs as root)")
        try Requirement.require(FileManager.default.isExecutableFile(atPath: PackagePaths.keygateBinary), "the built keygate binary")
        directory = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory + "/home", withIntermediateDirectories: true)
        pam = try PAMMatrix(service: "keygate", user: "root", password: Self.password)
        let askpass = directory + "/askpass"
        try "#!/bin/sh\necho prompt >> '\(promptLog)'\necho \(Self.password)\n".write(toFile: askpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: askpass)
    }

    /// This process's environment with the sandbox's settings, and the build folder first on PATH.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = directory + "/home"
        env["XDG_DATA_HOME"] = directory + "/data"
        env["KEYGATE_TEST_PAM_CONFDIR"] = pam.confdir
        env["KEYGATE_TEST_KDF"] = "fast"
        env["KEYGATE_TEST_POLICY_ROOT"] = EmptyPolicyRoot.path
        env["KEYGATE_TEST_HOST_KEY"] = hostKeyPath
        env["KEYGATE_TEST_GATE_DIR"] = directory + "/gate"
        env["KEYGATE_ASKPASS"] = directory + "/askpass"
        env["KEYGATE_TEST_TCTI"] = nil
        env["PATH"] = PackagePaths.buildProducts + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        return env
    }

    /// Runs `script` with bash inside its own private secret-session, in a new session (setsid).
    public func runInSecretSession(_ script: String, timeout: TimeInterval = 120) throws -> ProcessResult {
        try Subprocess.run(["setsid", "-w", PackagePaths.scripts + "/secret-session", "--ephemeral", "bash", "-c", script],
                           environment: environment, timeout: timeout)
    }

    /// Removes the folder (the PAM confdir goes with the PAMMatrix).
    public func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }
}
