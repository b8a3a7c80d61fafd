// The environment for tests that use the library in this process against the real
// stack: a pam_matrix service folder that accepts the current user with a known
// password, a fresh data folder, the test-hook Argon2id cost, no policy files, and
// no master key cached from an earlier test (it would belong to another data folder).
import Foundation
import Keygate

public final class InProcessKeychain {
    public let password = "matrix-\(UUID().uuidString.prefix(8))"
    public let dataHome: String
    /// The PAM service folder (KEYGATE_TEST_PAM_CONFDIR), for tests that edit the stack.
    public var pamConfdir: String { pam.confdir }
    private let pam: PAMMatrix
    private static let variables = ["XDG_DATA_HOME", "KEYGATE_TEST_PAM_CONFDIR", "KEYGATE_TEST_KDF",
                                    "KEYGATE_TEST_POLICY_ROOT", "KEYGATE_TEST_REUSE_DURATION", "KEYGATE_TEST_GATE_DIR"]

    public init() throws {
        try Requirement.requireSecretService()
        pam = try PAMMatrix(service: "keygate", user: try UserAccount.current().name, password: password)
        dataHome = NSTemporaryDirectory() + "keygate-data-\(UUID().uuidString)"
        setenv("XDG_DATA_HOME", dataHome, 1)
        setenv("KEYGATE_TEST_PAM_CONFDIR", pam.confdir, 1)
        setenv("KEYGATE_TEST_KDF", "fast", 1)
        setenv("KEYGATE_TEST_POLICY_ROOT", EmptyPolicyRoot.path, 1)
        // The gatekeeper's records and lockout of this test alone (docs/GATEKEEPER.md).
        setenv("KEYGATE_TEST_GATE_DIR", dataHome + "/gate", 1)
        try KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
    }

    /// Drops the cached keys, the test-hook variables and the data folder.
    public func tearDown() {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).lock(all: true)
        for name in Self.variables { unsetenv(name) }
        try? FileManager.default.removeItem(atPath: dataHome)
    }
}
