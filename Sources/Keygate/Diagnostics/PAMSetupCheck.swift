// Doctor checks for PAM: Keygate's own service files (/etc/pam.d/keygate and
// keygate-passcode, which every access-controlled read authenticates through), and
// whether pam_keygate.so appears in the login stacks (common-*, login, sshd) so the
// login password unlocks the keychain. Reads files only.

enum PAMSetupCheck {
    static let serviceFiles = ["keygate", "keygate-passcode"]
    static let stacks = ["common-auth", "common-session", "common-password", "login", "sshd"]

    static func serviceFiles(pamDirectory: String = "/etc/pam.d") -> DiagnosticResult {
        let missing = serviceFiles.filter { !FileProbe.exists(pamDirectory + "/" + $0) }
        if missing.isEmpty {
            return DiagnosticResult("pam-services", .ok, serviceFiles.map { "\(pamDirectory)/\($0)" }.joined(separator: ", ") + " present")
        }
        return DiagnosticResult(
            "pam-services", .fail,
            "missing " + missing.map { "\(pamDirectory)/\($0)" }.joined(separator: ", ")
                + ": PAM falls back to the `other` service, which denies, so access-controlled reads and unlocks fail",
            advice: "install the package, or `sudo make install` (it copies pam.d/keygate and pam.d/keygate-passcode)")
    }

    /// Non-comment lines of `text` that load pam_keygate.so.
    static func mentionsModule(_ text: String) -> Bool {
        text.split(separator: "\n").contains { line in
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            return !trimmed.hasPrefix("#") && trimmed.contains("pam_keygate.so")
        }
    }

    static func stacks(pamDirectory: String = "/etc/pam.d") -> DiagnosticResult {
        let using = stacks.filter { FileProbe.readText(pamDirectory + "/" + $0).map(mentionsModule) ?? false }
        let modules = FileProbe.glob("/usr/lib/*/security/pam_keygate.so") + FileProbe.glob("/lib/*/security/pam_keygate.so")
            + FileProbe.glob("/usr/lib/security/pam_keygate.so")
        if using.isEmpty {
            return DiagnosticResult(
                "pam-stacks", .warn,
                "pam_keygate.so is in none of " + stacks.map { "\(pamDirectory)/\($0)" }.joined(separator: ", ")
                    + ": the login password does not unlock the keychain, and this-device-only items need it for non-root users",
                advice: modules.isEmpty
                    ? "install pam_keygate.so (the package, or sudo make install), then run `sudo pam-auth-update --enable keygate`"
                    : """
                        run `sudo pam-auth-update --enable keygate`, or add `auth optional pam_keygate.so` and `session optional \
                        pam_keygate.so` after pam_unix
                        """)
        }
        if modules.isEmpty {
            return DiagnosticResult("pam-stacks", .warn, "pam_keygate.so is named in \(using.joined(separator: ", ")) but is not installed",
                                    advice: "install the package, or sudo make install (it puts pam_keygate.so in /usr/lib/<multiarch>/security)")
        }
        return DiagnosticResult("pam-stacks", .ok, "pam_keygate.so in \(using.joined(separator: ", ")) (\(modules[0]))")
    }
}
