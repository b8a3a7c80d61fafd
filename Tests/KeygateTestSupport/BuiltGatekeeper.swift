// The built keygate-gatekeeper as an installed one is: owned by root and setuid, so that
// a test user's keygate runs it with root's powers over root's state, the boundary the
// attack tests check (docs/GATEKEEPER.md). SwiftPM relinks it at each build, which drops
// the bit, so every test user sets it again. Root only (CI runs as root).
import Foundation

public enum BuiltGatekeeper {
    public static var path: String { PackagePaths.buildProducts + "/keygate-gatekeeper" }

    public static func makeSetuidRoot() throws {
        guard getuid() == 0 else { return }
        try Requirement.require(FileManager.default.isExecutableFile(atPath: path), "the built keygate-gatekeeper (swift build)")
        guard chown(path, 0, 0) == 0, chmod(path, 0o4755) == 0 else {
            throw TestUserError(description: "could not make \(path) setuid root: \(String(cString: strerror(errno)))")
        }
    }
}
