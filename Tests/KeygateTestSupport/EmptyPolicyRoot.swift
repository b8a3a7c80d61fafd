// A policy root with no policy files, for tests that are not about policies: with
// KEYGATE_TEST_POLICY_ROOT pointing here, a test-hook build reads no vendor, admin
// or user policy, whatever this machine has installed.
import Foundation

public enum EmptyPolicyRoot {
    /// Created once per test process, world-readable, owned by the test runner.
    public static let path: String = {
        let dir = NSTemporaryDirectory() + "keygate-no-policy-\(getpid())"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o755])
        return dir
    }()
}
