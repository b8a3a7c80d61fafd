// Doctor check: the host key behind this-device-only items (HostKey.path(environment)), and
// whether it is sealed to a TPM2 (host.key.tpm beside it). A plain key must be a
// regular file owned by root, mode 0400 (0600 tolerated); the doctor then says
// whether a TPM answers (and so whether `setup-host --tpm` is a next step). A
// sealed key must be root's too, and the TPM must still load it (HostKey's
// sealedHealth: Load, never Unseal, so no secret is read). Files are looked at
// with lstat only; a non-root user cannot see into /var/lib/keygate and is told
// to ask root.

enum HostKeyCheck {
    static let name = "host-key"

    static func run(environment: KeygateEnvironment) -> DiagnosticResult {
        let path = HostKey.path(environment)
        let sealed = HostKey.sealedPath(for: path)
        switch FileProbe.inspect(sealed) {
        case .found(let info):
            return sealedKey(path: path, sealed: sealed, info: info, environment: environment)
        case .error(let why):
            return DiagnosticResult(name, .warn, "cannot inspect \(sealed): \(why)", advice: "check /var/lib/keygate as root")
        case .absent, .denied:
            return plainKey(path: path, environment: environment)
        }
    }

    private static func plainKey(path: String, environment: KeygateEnvironment) -> DiagnosticResult {
        switch FileProbe.inspect(path) {
        case .absent:
            return DiagnosticResult(name, .warn, "\(path) is absent: this-device-only items cannot be added or read",
                                    advice: ProcessIdentity.euid == 0 && tpmAnswers(environment).answers ? """
                                        sudo keygate setup-host --tpm (this host has a TPM: the key is sealed to it)
                                        """ : "sudo keygate setup-host")
        case .denied:
            return DiagnosticResult(name, .ok, """
                \(path) is root's (not visible to uid \(FileProbe.uid)); run `sudo keygate doctor` to check its mode and whether it \
                is sealed to a TPM
                """)
        case .error(let why):
            return DiagnosticResult(name, .warn, "cannot inspect \(path): \(why)", advice: "check /var/lib/keygate as root")
        case .found(let info):
            if info.kind != .regular {
                return DiagnosticResult(name, .fail, "\(path) is not a regular file (a link or special file is refused)",
                                        advice: "remove it, then run sudo keygate setup-host (this-device-only items sealed for it are lost)")
            }
            if info.uid != 0 || (info.mode != 0o400 && info.mode != 0o600) {
                return DiagnosticResult(name, .fail, """
                    \(path) has owner uid \(info.uid) and mode 0\(String(info.mode, radix: 8)); it must be root's, mode 0400
                    """,
                                        advice: "sudo chown root:root \(path) && sudo chmod 0400 \(path)")
            }
            let found = "\(path) present, root, mode 0\(String(info.mode, radix: 8)), not sealed to a TPM"
            let tpm = tpmAnswers(environment)
            if tpm.answers {
                return DiagnosticResult(name, .ok, found + "; a TPM answers at \(tpm.tcti)",
                                        advice: "sudo keygate setup-host --tpm: seals the key to the TPM, so that a copied disk no longer carries it")
            }
            return DiagnosticResult(name, .ok, found + "; no TPM (\(tpm.why))",
                                    advice: "no TPM: the host key is a root-only file; a copied disk carries it (keep disks and backups encrypted)")
        }
    }

    private static func sealedKey(path: String, sealed: String, info: FileProbe.Info,
                                  environment: KeygateEnvironment) -> DiagnosticResult {
        if info.kind != .regular || info.uid != 0 || (info.mode != 0o400 && info.mode != 0o600) {
            return DiagnosticResult(name, .fail, """
                \(sealed) must be a regular file owned by root, mode 0400 (found uid \(info.uid), mode \
                0\(String(info.mode, radix: 8)))
                """,
                                    advice: "sudo chown root:root \(sealed) && sudo chmod 0400 \(sealed)")
        }
        switch HostKey.sealedHealth(at: path, environment: environment) {
        case .opens(let tcti):
            if AtomicFile.exists(path) {
                return DiagnosticResult(name, .warn, """
                    the host key is sealed to the TPM at \(tcti), but the plaintext \(path) is still there (an interrupted move)
                    """,
                                        advice: "sudo keygate setup-host --tpm: checks they match, then removes the plain file")
            }
            return DiagnosticResult(name, .ok, """
                the host key is sealed to the TPM at \(tcti) (\(sealed), root, mode 0\(String(info.mode, radix: 8))); a copied disk \
                does not carry it
                """)
        case .unusable(let error):
            return DiagnosticResult(name, .fail, error.message, advice: """
                restore \(sealed) from a backup, or sudo keygate setup-host --tpm --rotate (this-device-only items are lost)
                """)
        case .unreachable(let tcti, let error):
            return DiagnosticResult(name, .fail, "the host key is sealed to the TPM at \(tcti), which does not answer: \(shortReason(error.message))",
                                    advice: """
                                        bring that TPM back (check `tpm2_getrandom 8 -T \(tcti)`); this-device-only items open again when it answers
                                        """)
        case .refused(let tcti, let error):
            return DiagnosticResult(name, .fail, refusedMessage(tcti: tcti, error),
                                    advice: """
                                        sudo keygate setup-host --tpm --rotate (a new host key; this-device-only items sealed for the old one \
                                        cannot be recovered: add them again)
                                        """)
        }
    }

    /// What to say when the TPM answers but will not load the sealed key: a TPM refusal already names
    /// the TPM and says why (by its reason, not its wording); anything else is put in context.
    static func refusedMessage(tcti: String, _ error: KeychainError) -> String {
        error.reason == .tpmRefused ? error.message : "the host key is sealed to the TPM at \(tcti), which no longer opens it: \(error.message)"
    }

    /// Whether a TPM answers where a new seal would go. Root only: others cannot open the TPM anyway.
    private static func tpmAnswers(_ environment: KeygateEnvironment) -> (answers: Bool, tcti: String, why: String) {
        guard ProcessIdentity.euid == 0 else { return (false, TPMTCTI.defaultConfiguration, "not checked as uid \(FileProbe.uid)") }
        let probe = HostKey.tpmAbsenceReason(environment: environment)
        return (probe.reason == nil, probe.tcti, probe.reason.map(shortReason) ?? "")
    }

    /// The first clause of a TPM error ("no TPM answers at X (why)"), without the long advice.
    private static func shortReason(_ message: String) -> String {
        let chars = Array(message)
        for i in chars.indices.dropLast(2) where chars[i] == ")" && chars[i + 1] == ":" && chars[i + 2] == " " {
            return String(chars[...i])
        }
        return message
    }
}
