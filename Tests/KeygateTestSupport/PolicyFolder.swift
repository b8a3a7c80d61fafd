// A policy root for one test, as KEYGATE_TEST_POLICY_ROOT reads it (test-hook builds only):
// vendor/, admin/ and user/ folders, world-readable, each file the test names written 0644.
// The one builder the CLI tests share, so the layout is written once. The caller
// removes it at teardown (`addTeardownBlock { PolicyFolder.remove(root) }`).
import Foundation

public enum PolicyFolder {
    /// A new policy root under the temporary folder, named `prefix-UUID`. `files` maps a path
    /// inside it ("admin/10-x.policy") to its text; `shipped` puts the source tree's
    /// policies/00-default.policy in vendor/; `userOwner` (a user name) gets user/ and what is in it.
    public static func make(_ files: [String: String], shipped: Bool = false, userOwner: String? = nil,
                            prefix: String = "keygate-policy") throws -> String {
        let root = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString)"
        let fm = FileManager.default
        for layer in ["vendor", "admin", "user"] {
            try fm.createDirectory(atPath: root + "/" + layer, withIntermediateDirectories: true,
                                   attributes: [.posixPermissions: 0o755])
        }
        try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: root)
        for (name, text) in files {
            try text.write(toFile: root + "/" + name, atomically: false, encoding: .utf8)
            try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root + "/" + name)
        }
        if shipped {
            try fm.copyItem(atPath: PackagePaths.root + "/policies/00-default.policy", toPath: root + "/vendor/00-default.policy")
            try fm.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root + "/vendor/00-default.policy")
        }
        if let userOwner { _ = try Subprocess.run(["chown", "-R", "\(userOwner):", root + "/user"]) }
        return root
    }

    public static func remove(_ root: String) {
        try? FileManager.default.removeItem(atPath: root)
    }
}
