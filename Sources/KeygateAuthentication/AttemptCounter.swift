// Who counts authentication attempts, and when (docs/GATEKEEPER.md, "An authentication the
// user cannot kill"): as pam_faillock's preauth does, an attempt is counted before PAM sees
// the answer, so a process killed while PAM decides, or a record that cannot be written,
// costs the guesser the try and never the counter its count. The gatekeeper counts in
// root's records; PAMAuthenticator calls these around each pam_authenticate.

package protocol AttemptCounter {
    /// Before an attempt: counts it, or throws to refuse it (a lockout, records that cannot be written).
    func begin() throws
    /// The attempt ended before any answer reached PAM (a cancel at the prompt): not a guess.
    func unanswered()
    /// PAM refused the answer (counted already); throws to stop, when a lockout started.
    func failed() throws
    /// PAM accepted it: the count starts again.
    func succeeded() throws
}

/// No counting (the caller keeps no records).
package struct UncountedAttempts: AttemptCounter {
    package init() {}
    package func begin() throws {}
    package func unanswered() {}
    package func failed() throws {}
    package func succeeded() throws {}
}
