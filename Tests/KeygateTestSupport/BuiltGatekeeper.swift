// The gatekeeper the tests' keygate runs, as an installed one is: owned by root and setuid,
// so that a test user's keygate runs it with root's powers over root's state, the boundary
// the attack tests check (docs/GATEKEEPER.md). A debug build's sits beside keygate, and
// SwiftPM relinks it at each build, which drops the bit, so every test user sets it again.
// The release pass (KEYGATE_BUILD_PRODUCTS=<prefix>/bin) uses the installed one in
// <prefix>/libexec/keygate, which `make install` made setuid root. Root only (CI runs as root).
import Foundation

public enum BuiltGatekeeper {
    /// Beside the built keygate, else where `make install` put it for that keygate.
    public static var path: String {
        let beside = PackagePaths.buildProducts + "/keygate-gatekeeper"
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return URL(fileURLWithPath: PackagePaths.buildProducts).deletingLastPathComponent().path
            + "/libexec/keygate/keygate-gatekeeper"
    }

    /// Whether the tests run a build's own gatekeeper (which they set up) rather than an installed one.
    public static var isBesideTheBuild: Bool {
        FileManager.default.isExecutableFile(atPath: PackagePaths.buildProducts + "/keygate-gatekeeper")
    }

    public static func makeSetuidRoot() throws {
        guard getuid() == 0 else { return }
        try Requirement.require(FileManager.default.isExecutableFile(atPath: path), "the built or installed keygate-gatekeeper (\(path))")
        guard isBesideTheBuild else {
            var info = stat()
            try Requirement.require(stat(path, &info) == 0 && info.st_uid == 0 && info.st_mode & S_ISUID != 0,
                                    "the installed \(path) setuid root (make install)")
            return
        }
        guard chown(path, 0, 0) == 0, chmod(path, 0o4755) == 0 else {
            throw TestUserError(description: "could not make \(path) setuid root: \(String(cString: strerror(errno)))")
        }
    }
}
