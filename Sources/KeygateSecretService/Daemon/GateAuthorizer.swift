// The gatekeeper's step of a gated item's prompt (ItemAuthorizer): the person authenticates for
// this one read, fresh, as the item's flags say (the password through PAM, a finger through
// fprintd), through the gatekeeper's unrecorded presence: no window or handle is read, none is
// left, because the gatekeeper sees this daemon, never the client, and nothing on a session bus
// proves which client authenticated. The prompt (askpass or pinentry: DaemonPrompter) relays the
// gatekeeper's PAM and fprintd messages, and says which item is asked for and by which program, as
// the kernel reports it (advisory: a same-user process can look like any program; the docs say so).
//
// Delegates: the authentication and the opening to Keygate's KeychainOperations (secretInPerson,
// openClientInPerson), one operations value per prompt, built on the worker, with its own store
// handle and a prompter that stops when the client leaves (CancellablePrompter).
import Keygate
import KeygateCore

struct GateAuthorizer: ItemAuthorizer {
    let prompter: any Prompter
    let environment: KeygateEnvironment

    func authorize(_ request: AuthorizationRequest) -> SecureBytes? {
        guard !request.cancellation.isCancelled else { return nil }
        let reason = Self.reason(request)
        do {
            let operations = try KeychainOperations.secretService(
                prompter: CancellablePrompter(base: prompter, cancellation: request.cancellation), environment: environment).operations
            let secret: SecureBytes?
            switch request.opening {
            case .keygate(let item): secret = try operations.secretInPerson(of: item, reason: reason)
            case .client(let blob, let uid): secret = try operations.openClientInPerson(blob, uid: uid, reason: reason)
            }
            // Opened, but the client left meanwhile: nothing is kept for anyone.
            return request.cancellation.isCancelled ? nil : secret
        } catch {
            // The daemon's log says why (journal); the client only hears "dismissed".
            SecretServiceDaemon.log("a gated item's prompt (\(request.path), for \(request.client)) was dismissed: "
                                    + ((error as? KeychainError)?.message ?? "\(error)"))
            return nil
        }
    }

    /// What the prompt says: the program, as the kernel reports it, and the item's label, each
    /// shown as plain text of one line (a label is the client's text: no newline may fake a line
    /// of the prompt).
    static func reason(_ request: AuthorizationRequest) -> String {
        let program = request.clientProgram.split(separator: "/").last.map(String.init) ?? ""
        let who = program.isEmpty ? "A program" + (request.clientPID > 0 ? " (pid \(request.clientPID))" : "")
            : "\(oneLine(program, max: 64))" + (request.clientPID > 0 ? " (pid \(request.clientPID))" : "")
        let label = oneLine(request.label, max: 120)
        return "\(who) wants to read \"\(label.isEmpty ? "an unnamed item" : label)\" from your keychain (Secret Service)."
    }

    static func oneLine(_ text: String, max: Int) -> String {
        let flat = String(text.unicodeScalars.map { scalar -> Character in
            scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}" ? " " : Character(scalar)
        })
        return flat.count > max ? String(flat.prefix(max - 1)) + "…" : flat
    }
}
