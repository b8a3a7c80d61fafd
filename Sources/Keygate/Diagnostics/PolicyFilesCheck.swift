// Doctor check: the policy files (PolicySet): how many were read, and every problem.
// A broken vendor or admin file makes adding, changing and reading items fail closed, so it is a
// FAIL; a broken user file is a WARN (it is ignored where it cannot tighten).

enum PolicyFilesCheck {
    static let name = "policy-files"

    static func run(_ set: PolicySet) -> DiagnosticResult {
        let problems = set.problems
        let systemBroken = set.files.contains { $0.layer.isSystem && ($0.state.hasPrefix("refused") || $0.state.hasPrefix("error")) }
        if problems.isEmpty {
            return DiagnosticResult(name, .ok, "\(set.readCount) policy file\(set.readCount == 1 ? "" : "s") read, no problems")
        }
        let detail = problems.joined(separator: "; ")
        if systemBroken || (try? set.keychainDecision()) == nil {
            return DiagnosticResult(name, .fail, detail + " (adding, changing and reading items fail closed; listing and deleting work)",
                                    advice: "fix or remove the file (sudo keygate policy check shows file:line:column)")
        }
        return DiagnosticResult(name, .warn, detail, advice: "fix it: keygate policy check")
    }
}
