// `make` in the source tree with stand-ins for the release build (install's prerequisites
// taken as made: `-o build -o pam -o man`), so `make install DESTDIR=...` and `make uninstall`
// run for real, from the Makefile's one INSTALL_LIST, without a release build. Used by the
// tests of what is installed where (InstallListTests, the Python backend's discovery).
import Foundation

public final class StagedInstall {
    /// Where the stand-ins live (bin/, pam/, man/); removed by `remove()`.
    public let work: String

    public init() throws {
        let fm = FileManager.default
        work = NSTemporaryDirectory() + "keygate-staged-install-\(UUID().uuidString)"
        for folder in ["bin", "pam", "man"] { try fm.createDirectory(atPath: work + "/" + folder, withIntermediateDirectories: true) }
        for program in ["keygate", "keygate-gatekeeper", "keygate-pam-helper", "keygate-secret-service"] {
            fm.createFile(atPath: work + "/bin/" + program, contents: Data("#!/bin/sh\n".utf8), attributes: [.posixPermissions: 0o755])
        }
        fm.createFile(atPath: work + "/pam/pam_keygate.so", contents: Data("stand-in".utf8))
        for source in try fm.contentsOfDirectory(atPath: PackagePaths.root + "/man") where source.hasSuffix(".scd") {
            fm.createFile(atPath: work + "/man/" + String(source.dropLast(4)), contents: Data("stand-in".utf8))
        }
    }

    /// `make -s VARIABLES... TARGETS...`, PREFIX=/usr unless `arguments` set another.
    public func make(_ arguments: [String], prefix: String = "/usr") throws -> ProcessResult {
        try Subprocess.run(["make", "-s", "--no-print-directory", "-C", PackagePaths.root, "-o", "build", "-o", "pam", "-o", "man",
                            "PREFIX=" + prefix, "SYSCONFDIR=/etc", "MULTIARCH=x86_64-linux-gnu", "RELEASE_BIN=" + work + "/bin",
                            "PAM_OUT=" + work + "/pam", "MAN_OUT=" + work + "/man"] + arguments, timeout: 120)
    }

    public func remove() { try? FileManager.default.removeItem(atPath: work) }
}
