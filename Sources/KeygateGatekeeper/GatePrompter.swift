// Who answers the gatekeeper's PAM prompts (docs/GATEKEEPER.md). The setuid helper relays
// them to the caller's terminal, askpass or pinentry (RelayPrompter); the daemon never
// prompts (a person typing would hold every other caller up), so it answers each with
// "no prompt allowed" and the caller runs the helper instead (SilentPrompter).
import KeygateAuthentication
import KeygateCore
import KeygateGateWire

protocol GatePrompter: Prompter {
    /// One event for the caller's audit trail (the caller names the item and scope).
    func audit(_ event: AuditEvent, service: String, detail: String)
}

/// The daemon's prompter: nothing can be asked, nothing is relayed.
struct SilentPrompter: GatePrompter {
    func readSecret(prompt: String) throws -> SecureBytes? { throw refusal }
    func notify(_ message: String) {}
    func ensureAvailable() throws { throw refusal }
    func audit(_ event: AuditEvent, service: String, detail: String) {}

    private var refusal: KeychainError {
        .interactionNotAllowed("the gatekeeper's daemon does not prompt: the setuid gatekeeper asks instead")
    }
}
