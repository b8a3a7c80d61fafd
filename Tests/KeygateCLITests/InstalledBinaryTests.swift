// What only the installed binary can show: the paths it names are the installed ones. Runs
// in make check's release pass (KEYGATE_TERMINAL_BINARY, the binary `make install` put on
// PATH), and on the debug build, where it checks the message for a source tree.
import Foundation
import KeygateTestSupport
import XCTest

final class InstalledBinaryTests: XCTestCase {
    /// Advice names the secret-session that `make install` or the .deb installed, which exists
    /// and runs, not a path in a source checkout.
    func test_noBusAdvice_namesTheInstalledSecretSession() throws {
        let (binary, installed) = TerminalShell.binary
        try Requirement.require(FileManager.default.isExecutableFile(atPath: binary), "the keygate binary at \(binary)")
        let r = try Subprocess.run([binary, "list"], environment: [
            "PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory(), "KEYGATE_STORE": "secret-service",
        ])
        XCTAssertEqual(r.status, 53, r.err)
        XCTAssertFalse(r.err.contains("scripts/secret-session or"), "a source path: \(r.err)")
        guard installed else {
            XCTAssertTrue(r.err.contains("libexec/keygate/secret-session"), r.err)
            return
        }
        let prefix = ((binary as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
        let tool = prefix + "/libexec/keygate/secret-session"
        XCTAssertTrue(r.err.contains("or run under \(tool)"), r.err)
        XCTAssertTrue(FileManager.default.isExecutableFile(atPath: tool), tool)
        XCTAssertEqual(try Subprocess.run([tool, "--help"]).status, 0)
    }
}
