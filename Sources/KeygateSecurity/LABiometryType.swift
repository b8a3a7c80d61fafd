// Apple's LABiometryType, reporting what the PAM stack really offers: `.touchID` (a
// fingerprint reader, as on a Mac) when the `keygate` PAM service, or a file it includes,
// uses pam_fprintd; `.none` otherwise. Face and optic ID do not exist on Linux. The
// stack is read from /etc/pam.d (debug builds: KEYGATE_TEST_PAM_CONFDIR, as Keygate's
// PAM code does). Delegates nothing: it reads the service files only.

public enum LABiometryType: Int, Sendable {
    case none = 0
    case touchID = 1
    case faceID = 2
    case opticID = 4

    @available(*, deprecated, renamed: "none")
    public static let LABiometryNone = LABiometryType.none
}

enum PAMStackProbe {
    /// Where the PAM service files are read from.
    static var confdir: String {
        #if KEYGATE_TEST_HOOKS
        if let dir = ProcessInfo.processInfo.environment["KEYGATE_TEST_PAM_CONFDIR"], !dir.isEmpty { return dir }
        #endif
        return "/etc/pam.d"
    }

    /// Whether `service` (or a file it includes, to a depth of 8) loads `module`.
    static func uses(_ module: String, service: String = "keygate", directory: String = confdir) -> Bool {
        var seen = Set<String>()
        func visit(_ name: String, depth: Int) -> Bool {
            guard depth < 8, !name.contains("/"), seen.insert(name).inserted,
                  let text = try? String(contentsOfFile: directory + "/" + name, encoding: .utf8) else { return false }
            for raw in text.split(separator: "\n") {
                let line = raw.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                guard let first = words.first else { continue }
                if first == "@include", words.count > 1 {
                    if visit(words[1], depth: depth + 1) { return true }
                    continue
                }
                if words.contains(where: { $0.hasPrefix(module) || $0.hasSuffix("/" + module) || $0.hasSuffix("/" + module + ".so") }) {
                    return true
                }
                if words.count > 2, words[1] == "include" || words[1] == "substack",
                   visit(words[2], depth: depth + 1) { return true }
            }
            return false
        }
        return visit(service, depth: 0)
    }

    /// What LAContext.biometryType reports.
    static func biometryType() -> LABiometryType {
        uses("pam_fprintd") ? .touchID : .none
    }
}

extension PAMStackProbe {
    /// Whether the `keygate` service file exists.
    static func serviceExists(_ service: String = "keygate") -> Bool {
        FileManager.default.fileExists(atPath: confdir + "/" + service)
    }
}
