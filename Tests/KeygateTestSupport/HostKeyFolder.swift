// Host keys for tests, each at its own path (test-hook builds read KEYGATE_TEST_HOST_KEY,
// the setuid gatekeeper too): made by the built `keygate setup-host` as root, in a
// root-only folder removed with this object. Two keys stand for two hosts.
import Foundation

public final class HostKeyFolder {
    public let directory: String

    public init() throws {
        try Requirement.require(Requirement.isRoot, "root, to make host keys (CI runs as root)")
        directory = NSTemporaryDirectory() + "keygate-hostkeys-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    /// A new host key named `name`; returns its path.
    public func make(_ name: String) throws -> String {
        let path = directory + "/\(name)/host.key"
        var env = ProcessInfo.processInfo.environment
        env["KEYGATE_TEST_HOST_KEY"] = path
        env["KEYGATE_TEST_TCTI"] = nil
        let r = try Subprocess.run([PackagePaths.keygateBinary, "setup-host"], environment: env, timeout: 60)
        guard r.status == 0, FileManager.default.fileExists(atPath: path) else {
            throw TestUserError(description: "keygate setup-host for \(path) failed: \(r.status) \(r.err)")
        }
        return path
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}
