// Doctor check: which item store is in use (the Secret Service or the embedded SQLite
// store) and why, read from the KeychainStatus snapshot. With the embedded store, a
// missing session bus is no failure, so the session-bus check is softened to OK.

enum StoreCheck {
    static let name = "store"

    static func run(_ s: KeychainStatus) -> DiagnosticResult {
        let reason = s.storeReason.map { " (\($0))" } ?? ""
        guard s.storeKind == StoreKind.embedded.rawValue else {
            if let advice = s.storeMismatchAdvice {
                return DiagnosticResult(name, .fail, "Secret Service" + reason + ", which this session cannot reach", advice: advice)
            }
            return DiagnosticResult(name, .ok, "Secret Service" + reason)
        }
        if let error = s.storeError {
            return DiagnosticResult(name, .fail, "embedded store: \(error)", advice: "see the message; then run keygate doctor again")
        }
        return DiagnosticResult(name, .ok, "embedded store \(s.collection ?? "?")" + reason,
                                advice: s.storeReason?.hasPrefix("auto") == true
                                    ? "to use a Secret Service later: keygate migrate --to secret-service" : "")
    }

    /// The system checks, with the session bus not required when the embedded store is in use.
    static func adjust(_ results: [DiagnosticResult], for s: KeychainStatus) -> [DiagnosticResult] {
        guard s.storeKind == StoreKind.embedded.rawValue else { return results }
        return results.map { r in
            guard r.check == SessionBusCheck.name, r.level != .ok else { return r }
            return DiagnosticResult(r.check, .ok, r.detail + "; not needed: the embedded store is in use")
        }
    }
}
