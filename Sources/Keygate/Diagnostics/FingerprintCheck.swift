// Doctor checks for fingerprints, each with its fix: fprintd (installed,
// answering, a reader), pam_fprintd in the biometric stack (/etc/pam.d/keygate-biometry,
// which the gatekeeper runs for biometry-any and biometry-current-set items), and the
// user's enrolled set. A host with no fprintd at all is fine (OK, with what to install):
// only biometry items need it. Reads files and asks fprintd (FingerprintState); never prompts.

enum FingerprintCheck {
    static let fprintd = "/usr/libexec/fprintd"
    static let stack = "keygate-biometry"

    static func run(userName: String, environment: KeygateEnvironment, pamDirectory: String = "/etc/pam.d") -> [DiagnosticResult] {
        let installed = FileProbe.exists(fprintd)
        let state = installed ? FingerprintState.current(userName: userName, environment: environment) : nil
        return [daemon(installed: installed, state), pamStack(fprintdInstalled: installed, pamDirectory: pamDirectory),
                enrolled(state)]
    }

    static func daemon(installed: Bool, _ state: FingerprintState?) -> DiagnosticResult {
        guard installed, let state else {
            return DiagnosticResult("fprintd", .ok, "not installed: biometry-any and biometry-current-set items cannot be read (no other item needs it)",
                                    advice: "to use a fingerprint reader: sudo apt-get install fprintd libpam-fprintd")
        }
        if let problem = state.problem {
            return DiagnosticResult("fprintd", .warn, "installed, but it cannot be asked: \(problem)",
                                    advice: "start it (`sudo systemctl start fprintd`; D-Bus starts it on demand), or restart a hung one")
        }
        guard let device = state.device else {
            return DiagnosticResult("fprintd", .ok, "running; it reports no fingerprint reader, so items that need a finger cannot be read",
                                    advice: "connect a reader libfprint supports (`fprintd-list $USER` shows it)")
        }
        return DiagnosticResult("fprintd", .ok, "running; reader: \(device)")
    }

    /// Non-comment `auth` lines of `text` that load pam_fprintd.so.
    static func loadsFprintd(_ text: String) -> Bool {
        text.split(separator: "\n").contains { line in
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            return !trimmed.hasPrefix("#") && trimmed.contains("pam_fprintd.so")
        }
    }

    static func pamStack(fprintdInstalled: Bool, pamDirectory: String) -> DiagnosticResult {
        let path = pamDirectory + "/" + stack
        let module = FileProbe.glob("/usr/lib/*/security/pam_fprintd.so") + FileProbe.glob("/lib/*/security/pam_fprintd.so")
        // Without fprintd nothing reads a finger anyway: a missing piece is the same advice, not a warning.
        let missing: DiagnosticResult.Level = fprintdInstalled ? .warn : .ok
        guard let text = FileProbe.readText(path) else {
            return DiagnosticResult("pam-fprintd", missing, "\(path) is missing: items that need a finger fail",
                                    advice: "install the package, or `sudo make install` (it copies pam.d/keygate-biometry)")
        }
        guard loadsFprintd(text) else {
            return DiagnosticResult("pam-fprintd", missing, "\(path) does not load pam_fprintd.so: no finger can be read",
                                    advice: "put Keygate's pam.d/keygate-biometry back (`auth required pam_fprintd.so max-tries=1`)")
        }
        guard let found = module.first else {
            return DiagnosticResult("pam-fprintd", missing, "\(path) loads pam_fprintd.so, which is not installed",
                                    advice: "sudo apt-get install libpam-fprintd")
        }
        return DiagnosticResult("pam-fprintd", .ok, "\(path) loads pam_fprintd.so (\(found))")
    }

    static func enrolled(_ state: FingerprintState?) -> DiagnosticResult {
        guard let state, state.problem == nil, let device = state.device else {
            return DiagnosticResult("enrolled-fingers", .ok, "no reader to enroll on")
        }
        if state.enrolledFingers.isEmpty {
            return DiagnosticResult("enrolled-fingers", .ok,
                                    "no finger enrolled on \(device): items that need a finger cannot be read or added (biometry-current-set)",
                                    advice: "enroll one with `fprintd-enroll`")
        }
        return DiagnosticResult("enrolled-fingers", .ok, """
            \(state.enrolledFingers.joined(separator: ", ")) on \(device); biometry-current-set items are bound to this set: \
            enrolling, removing or enrolling again a finger invalidates them
            """)
    }
}
