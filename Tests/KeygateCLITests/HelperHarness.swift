// What the integration tests of the credential helpers (git, docker, ssh, Python
// keyring) share: the helper wrappers of contrib/helpers copied into the test user's
// ~/bin (each execs the staged keygate on PATH, as the installed ones do), and
// policy folders for KEYGATE_TEST_POLICY_ROOT. Delegates users and sessions to
// CLIUserHarness.
import Foundation
import KeygateTestSupport
import XCTest

extension CLIUserHarness {
    /// Copies contrib/helpers/* into ~/bin; scripts put it first on PATH with `export PATH="$HOME/bin:$PATH"`.
    func installHelperWrappers() throws {
        let fm = FileManager.default
        let source = PackagePaths.root + "/contrib/helpers"
        let bin = user.home + "/bin"
        try fm.createDirectory(atPath: bin, withIntermediateDirectories: true)
        for name in try fm.contentsOfDirectory(atPath: source) {
            try fm.copyItem(atPath: source + "/" + name, toPath: bin + "/" + name)
            try fm.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/" + name)
        }
        _ = try Subprocess.run(["chown", "-R", "\(user.name):", bin])
    }

    /// A root-owned policy root whose admin layer holds `files` (name → text), removed at teardown;
    /// with `shipped`, the vendor layer holds policies/00-default.policy, and `user` files go in the
    /// user layer, owned by the test user (their own, as ~/.config/keygate/policies.d is).
    func policyRoot(_ files: [String: String], shipped: Bool = false, user userFiles: [String: String] = [:],
                    for test: XCTestCase) throws -> String {
        let layered = files.map { ("admin/" + $0.key, $0.value) } + userFiles.map { ("user/" + $0.key, $0.value) }
        let root = try PolicyFolder.make(Dictionary(uniqueKeysWithValues: layered), shipped: shipped, userOwner: user.name)
        test.addTeardownBlock { PolicyFolder.remove(root) }
        return root
    }

    /// Shell lines that put a spy named `program` in ~/spy: it appends its arguments and
    /// environment to ~/spy.log, then execs the real one found on PATH now. Scripts then
    /// run with PATH="$HOME/spy:$PATH" to see what the helpers pass to it.
    static func spy(on program: String) -> String {
        """
        mkdir -p "$HOME/spy"; real=$(command -v \(program))
        printf '#!/bin/sh\\nprintf "argv: %%s\\\\n" "$*" >> "$HOME/spy.log"\\nenv >> "$HOME/spy.log"\\nexec %s "$@"\\n' "$real" > "$HOME/spy/\(program)"
        chmod 755 "$HOME/spy/\(program)"; : > "$HOME/spy.log"
        """
    }

    /// Whether a program is on the PATH test users get.
    static func hasTool(_ name: String) -> Bool {
        ["/usr/local/bin", "/usr/bin", "/bin"].contains { FileManager.default.isExecutableFile(atPath: $0 + "/" + name) }
    }
}
