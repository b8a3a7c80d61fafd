// The gatekeeper's attempt counter (AttemptCounter), kept in root's records under their lock
// (docs/GATEKEEPER.md, "An authentication the user cannot kill"). Before each attempt it
// refuses during the user's lockout (a finger's, also during the biometric lockout) and counts
// the attempt, a finger's in the biometric counter; a record that cannot be written
// refuses the attempt, so no guess goes uncounted. A wrong answer may start the lockout; a
// cancel before any answer gives the count back; a success clears it and records the
// authentication for the caller's scope. The audit events go to the caller's trail and to
// root's own record (GateAuditFile), which no syslog outage and no process of the user loses.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

struct RecordedAttempts: AttemptCounter {
    let uid: UInt32
    let userName: String
    let lockout: UserLockout
    let service: String
    let scope: String
    /// The service name the success is recorded under (an unlock's is "unlock:SERVICE"); nil: an
    /// unrecorded presence, whose success clears the failures and is written nowhere as an authentication.
    let recordAs: String?
    let prompter: any GatePrompter
    /// The gatekeeper's environment (its main's KeygateEnvironment): where root's records are.
    let environment: KeygateEnvironment
    /// A fingerprint's attempts go to the biometric counter and lockout (GateRecords.beginFingerAttempt),
    /// a password's to the user's.
    var credential: PAMAuthenticator.Credential = .password

    func begin() throws {
        let left: UInt32?
        do {
            left = try GateRecords.update(uid: uid, environment: environment) { records -> UInt32? in
                guard credential == .fingerprint else { return records.beginAttempt(lockout, now: GateRecords.now) }
                switch records.beginFingerAttempt(lockout, now: GateRecords.now) {
                case .lockedOut(let left): return left
                case .biometryLocked: return UInt32.max
                case nil: return nil
                }
            }
        } catch let error as KeychainError {
            throw KeychainError.notAvailable("""
                the gatekeeper could not count this attempt in its records, so it was not made: \(error.message)
                """)
        }
        if left == UInt32.max {
            audit(.lockout, detail: "refused: biometry locked out after repeated failed matches")
            throw GateRefusal.biometryLockedOut
        }
        if let left {
            audit(.lockout, detail: "refused: locked out after repeated failures")
            throw GateRefusal.lockedOut(left)
        }
    }

    func unanswered() {
        // try?: a count that cannot be given back stays counted, which is the stricter side.
        _ = try? GateRecords.update(uid: uid, environment: environment) { credential == .fingerprint ? $0.fingerUnanswered() : $0.attemptUnanswered() }
    }

    func failed() throws {
        if credential == .fingerprint {
            audit(.authFailure, detail: "failed fingerprint match")
            if try GateRecords.update(uid: uid, environment: environment, { $0.fingerFailed() }) {
                audit(.lockout, detail: "biometry lockout started")
                FingerUnlockKey.drop(uid: uid, environment: environment)   // and the finger no longer reopens the keychain
                throw GateRefusal.biometryLockedOut
            }
            return
        }
        audit(.authFailure, detail: "incorrect password")
        let left = try GateRecords.update(uid: uid, environment: environment) { $0.attemptFailed(lockout, now: GateRecords.now) }
        if let left {
            audit(.lockout, detail: "lockout started")
            throw GateRefusal.lockedOut(left)
        }
    }

    func succeeded() throws {
        audit(.authSuccess, detail: recordAs == nil ? "not recorded: no window or handle comes of it" : "")
        try GateRecords.update(uid: uid, environment: environment) { records in
            records.dropEndedScopes(isLive: CallerScope.isLive)
            if let recordAs {
                records.recordSuccess(service: recordAs, scope: scope, now: GateRecords.now)
            } else {
                records.clearFailures()
            }
            records.credentialSucceeded(password: credential == .password)
        }
    }

    /// One event for the caller's trail and for root's record.
    private func audit(_ event: AuditEvent, detail: String) {
        prompter.audit(event, service: service, detail: detail)
        GateAuditFile.append(uid: uid, [("uid", "\(uid)"), ("user", userName), ("event", event.rawValue), ("scope", scope),
                              ("pam-service", service), ("detail", detail.isEmpty ? nil : detail)],
                             environment: environment)
    }
}
