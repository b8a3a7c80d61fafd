// A private gatekeeper for one test: its own state and records folder
// (KEYGATE_TEST_GATE_DIR), the built keygate-gatekeeper (KEYGATE_TEST_GATEKEEPER),
// pam_matrix services with known passwords (KEYGATE_TEST_PAM_CONFDIR) and policy files
// the test writes (KEYGATE_TEST_POLICY_ROOT, system layers root-owned). Test-hook builds
// only; the real helper binary runs for every call.
import Foundation

public final class GatekeeperSandbox {
    public let root: String
    public let gateDirectory: String
    public let policyRoot: String
    public let pamConfdir: String
    public let helper: String
    public let user: String
    private static let variables = ["KEYGATE_TEST_GATE_DIR", "KEYGATE_TEST_GATEKEEPER", "KEYGATE_TEST_PAM_CONFDIR",
                                    "KEYGATE_TEST_POLICY_ROOT", "KEYGATE_TEST_HOST_KEY"]

    /// `services`: PAM service name → the password it accepts for the current user.
    /// `policies`: "admin/10-x.policy" → text.
    public init(services: [String: String], policies: [String: String] = [:]) throws {
        try Requirement.require(PAMMatrix.modulePath != nil, "pam_wrapper's pam_matrix.so (apt-get install libpam-wrapper)")
        helper = PackagePaths.buildProducts + "/keygate-gatekeeper"
        try Requirement.require(FileManager.default.isExecutableFile(atPath: helper), "the built keygate-gatekeeper (swift build)")
        let fm = FileManager.default
        root = NSTemporaryDirectory() + "keygate-gate-\(UUID().uuidString)"
        gateDirectory = root + "/gate"
        policyRoot = try PolicyFolder.make(policies, prefix: "keygate-gate-policy")
        pamConfdir = root + "/pam"
        user = String(cString: getpwuid(getuid()).pointee.pw_name)
        try fm.createDirectory(atPath: gateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try fm.createDirectory(atPath: pamConfdir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        let module = PAMMatrix.modulePath ?? ""
        for (service, password) in services {
            let passdb = pamConfdir + "/\(service).passdb"
            try "\(user):\(password):\(service)\n".write(toFile: passdb, atomically: true, encoding: .utf8)
            let stack = "auth required \(module) passdb=\(passdb)\naccount required \(module) passdb=\(passdb)\n"
            try stack.write(toFile: pamConfdir + "/" + service, atomically: true, encoding: .utf8)
        }
        setenv("KEYGATE_TEST_GATE_DIR", gateDirectory, 1)
        setenv("KEYGATE_TEST_GATEKEEPER", helper, 1)
        setenv("KEYGATE_TEST_PAM_CONFDIR", pamConfdir, 1)
        setenv("KEYGATE_TEST_POLICY_ROOT", policyRoot, 1)
    }

    /// The records file of `uid` (root's authentications, failures and lockout).
    public func recordsPath(uid: UInt32) -> String { gateDirectory + "/ts/\(uid)" }

    public func tearDown() {
        for name in Self.variables { unsetenv(name) }
        try? FileManager.default.removeItem(atPath: root)
        PolicyFolder.remove(policyRoot)
    }
}
