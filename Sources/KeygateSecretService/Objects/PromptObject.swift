// org.freedesktop.Secret.Prompt: what Unlock hands a client when something must be asked of the
// person. It belongs to the connection that asked (no other may run or dismiss it), runs once,
// and ends once: Completed(dismissed, result) is sent when it finishes, is dismissed, or at
// once when the daemon has no way to ask (no display for a pinentry, no askpass): never a hang.
// What it runs is a list of steps: unlock the keychain (the login password through the
// gatekeeper's PAM conversation, as `keygate unlock`), then authorize each gated item for this
// connection's next read (the pluggable ItemAuthorizer step: GateAuthorizer, the person through
// the gatekeeper, fresh and unrecorded). A client that leaves mid-prompt cancels it
// (PromptCancellation): nothing it opened is kept.
import Keygate
import KeygateCore

package struct PromptObject {
    package let id: String
    package let owner: String
    /// The keychain must be unlocked first.
    package let unlockKeychain: Bool
    /// Gated items to authorize for the owner's next read, once each.
    package let authorize: [AuthorizationRequest]
    /// Objects unlocked once the prompt succeeds (and those already unlocked), for Completed's result.
    package let objects: [String]
    package var started = false
    /// Set when the owner leaves the bus: the authentication under way stops, and opens nothing.
    package let cancellation: PromptCancellation

    package var path: String { ObjectPath.prompt(id).path }
}

/// What a finished prompt reports to the loop (from the worker that ran it).
package struct PromptOutcome: Sendable {
    package let id: String
    package let dismissed: Bool
    /// The gated items the person authorized: their secrets, for the owner's next read.
    package let authorized: [(ItemRef, SecureBytes)]
}

/// A gated item the prompt asks the person about, and who asks (advisory: a same-user process
/// can look like any program).
package struct AuthorizationRequest: Sendable {
    package let ref: ItemRef
    package let path: String
    package let label: String
    package let attributes: [String: String]
    /// The client's unique name, process id and program as the kernel reports them (0 and "" when unknown).
    package let client: String
    package let clientPID: UInt32
    package let clientProgram: String
    /// The window the client named for the prompt ("" for none).
    package var windowID: String
    /// What opening the item takes (fetched by the loop).
    package let opening: GatedOpening
    /// The prompt's: set when the client leaves.
    package var cancellation = PromptCancellation()
}

/// The one pluggable step of a gated item's prompt: ask the person, fresh, for this item and
/// this client, and open it. Runs on a worker thread, never on the bus loop. Returns the
/// secret when the person authorized the read, nil when they did not (or nothing could ask):
/// the prompt then completes as dismissed. Whatever it returns opens that item for the owner's
/// next GetSecret or GetSecrets, once, and for nothing else.
package protocol ItemAuthorizer: Sendable {
    func authorize(_ request: AuthorizationRequest) -> SecureBytes?
}

/// Until the gatekeeper's step is plugged in, a gated item's prompt is dismissed: the item stays
/// locked to every connection, never opened with the cached keys.
package struct DismissingAuthorizer: ItemAuthorizer {
    package init() {}
    package func authorize(_ request: AuthorizationRequest) -> SecureBytes? { nil }
}

extension SecretServiceHost {
    func promptCall(_ id: String, _ call: SecretServiceCall, sender: String) throws -> BusValue {
        guard var prompt = prompts[id], prompt.owner == sender else { throw SecretServiceError.noSuchObject(ObjectPath.prompt(id).path) }
        switch call {
        case .dismiss:
            prompts.removeValue(forKey: id)
            emit(prompt.path, SecretInterface.prompt, "Completed", [.boolean(true), .variant(Variant.objectPaths([]))])
            return .tuple([])
        case .prompt(let windowID):
            guard !prompt.started else {
                throw SecretServiceError(SecretServiceErrorName.failed, "the prompt \(prompt.path) is running already: it runs once")
            }
            // Nothing can ask the person: dismissed at once, never a hang.
            guard canAsk else {
                SecretServiceDaemon.log("an Unlock prompt was dismissed at once: no KEYGATE_ASKPASS, and no display for a pinentry")
                prompts.removeValue(forKey: id)
                emit(prompt.path, SecretInterface.prompt, "Completed", [.boolean(true), .variant(Variant.objectPaths([]))])
                return .tuple([])
            }
            prompt.started = true
            prompts[id] = prompt
            let unlocker = keychain.unlocker
            let authorizer = self.authorizer
            let outcomes = self.outcomes
            let cancellation = prompt.cancellation
            let requests = prompt.authorize.map { request -> AuthorizationRequest in
                var named = request
                named.windowID = windowID
                named.cancellation = cancellation
                return named
            }
            let unlockKeychain = prompt.unlockKeychain
            PromptWorker.run {
                var dismissed = false
                if unlockKeychain {
                    do {
                        try unlocker.unlock()
                    } catch {
                        // Said in the daemon's log (journal): the client only hears "dismissed".
                        dismissed = true
                        SecretServiceDaemon.log("an Unlock prompt was dismissed: "
                                                + ((error as? KeychainError)?.message ?? "\(error)"))
                    }
                }
                var authorized: [(ItemRef, SecureBytes)] = []
                if !dismissed {
                    for request in requests {
                        guard !cancellation.isCancelled else { dismissed = true; break }
                        guard let secret = authorizer.authorize(request) else { dismissed = true; break }
                        authorized.append((request.ref, secret))
                    }
                }
                outcomes.add(PromptOutcome(id: id, dismissed: dismissed, authorized: dismissed ? [] : authorized))
            }
            return .tuple([])
        default:
            throw SecretServiceError(SecretServiceErrorName.failed, "not a method of a prompt")
        }
    }

    /// Ends a prompt a worker finished: the authorizations for its owner, and Completed.
    func complete(_ outcome: PromptOutcome) {
        // The owner may have left meanwhile: then nothing is kept.
        guard let prompt = prompts.removeValue(forKey: outcome.id) else { return }
        for (ref, secret) in outcome.authorized { authorized[prompt.owner, default: [:]][ref] = secret }
        let result = outcome.dismissed ? [] : prompt.objects
        emit(prompt.path, SecretInterface.prompt, "Completed", [.boolean(outcome.dismissed), .variant(Variant.objectPaths(result))])
    }
}
