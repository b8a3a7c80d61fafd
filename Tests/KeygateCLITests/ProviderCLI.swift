// The real `keygate` binary run as a user runs it, against one provider alone on a private bus
// (ProviderSession): a fresh HOME, PATH with the built binary first, PAM through pam_wrapper's
// pam_matrix in a temporary folder (a test-hook build reads KEYGATE_TEST_PAM_CONFDIR) and an
// askpass that types the test password. Shared by the provider CLI tests.
import Foundation
import KeygateTestSupport
import XCTest

enum ProviderCLI {
    /// Runs `script` with `sh -c` against `session`'s provider; `timeout` bounds the whole script.
    static func run(_ session: ProviderSession, _ script: String, timeout: TimeInterval = 120) throws -> ProcessResult {
        let home = session.folder + "/cli-home"
        let confdir = session.folder + "/pam"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: confdir, withIntermediateDirectories: true)
        try Requirement.require(PAMMatrix.modulePath != nil, "pam_wrapper's pam_matrix.so (apt-get install libpam-wrapper)")
        let module = PAMMatrix.modulePath ?? ""
        let passdb = confdir + "/passdb"
        let user = String(cString: getpwuid(getuid()).pointee.pw_name)
        try ["keygate", "keygate-passcode"].map { "\(user):test-password:\($0)\n" }.joined()
            .write(toFile: passdb, atomically: true, encoding: .utf8)
        for service in ["keygate", "keygate-passcode"] {
            try "auth required \(module) passdb=\(passdb)\naccount required \(module) passdb=\(passdb)\n"
                .write(toFile: confdir + "/" + service, atomically: true, encoding: .utf8)
        }
        let askpass = session.folder + "/askpass"
        try "#!/bin/sh\necho test-password\n".write(toFile: askpass, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: askpass)
        var env = session.environment
        env["HOME"] = home
        env["PATH"] = PackagePaths.buildProducts + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        for key in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "KEYGATE_STORE", "KEYGATE_UNLOCK_PROMPT"] { env.removeValue(forKey: key) }
        env["KEYGATE_ASKPASS"] = askpass
        env["KEYGATE_TEST_PAM_CONFDIR"] = confdir
        env["KEYGATE_TEST_KDF"] = "fast"
        env["KEYGATE_TEST_POLICY_ROOT"] = EmptyPolicyRoot.path
        return try Subprocess.run(["sh", "-c", script], environment: env, timeout: timeout)
    }
}
