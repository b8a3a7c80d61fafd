// The state behind every object keygate-secret-service serves, and the routing of one decoded
// call to its object: the service, a collection, an item, a session or a prompt (one file each,
// under Objects/), or the Properties and Introspectable interfaces every object has. It knows
// nothing of sd-bus: the daemon (SecretServiceDaemon) hands it a DecodedCall and the caller's
// unique name, sends what it answers, and then the signals it queued. Single-threaded: only the
// bus loop calls in; prompt workers report back through `outcomes`.
import Keygate
import KeygateCore

package final class SecretServiceHost {
    let keychain: ClientKeychain
    let authorizer: any ItemAuthorizer
    /// Whether the daemon can ask the person (a pinentry on a display, or an askpass program).
    let canAsk: Bool
    var sessions: [String: SessionObject] = [:]
    var prompts: [String: PromptObject] = [:]
    /// Gated items a prompt opened, by client, for that client's next read of each, once.
    var authorized: [String: [ItemRef: SecureBytes]] = [:]
    private var nextSession: UInt64 = 1
    private var nextPrompt: UInt64 = 1
    /// Signals to send after the current reply: (path, interface, member, arguments).
    var signals: [(String, String, String, BusValue)] = []
    /// Prompts finished by workers, for the loop to report.
    let outcomes = PromptOutcomes()
    /// Who a client is, as the bus daemon reports it (for the prompt; advisory): set by the daemon.
    var describeClient: (String) -> (pid: UInt32, program: String) = { _ in (0, "") }
    /// The keychain's lock state the clients last heard of (CollectionChanged when it moves).
    var lastLocked: Bool

    package init(keychain: ClientKeychain, authorizer: any ItemAuthorizer, canAsk: Bool) {
        self.keychain = keychain
        self.authorizer = authorizer
        self.canAsk = canAsk
        lastLocked = keychain.isLocked
    }

    /// Answers one call from `sender`: the reply's arguments, or the error to send.
    package func handle(_ decoded: DecodedCall, sender: String) -> Result<CallReply, SecretServiceError> {
        // Reads may see a lock state up to 100 ms old (a secret still needs the cached key when it
        // is opened); what decides a prompt or a write looks at the kernel keyring now.
        switch decoded.call {
        case .unlock, .lock, .createItem, .setSecret: keychain.refresh(force: true)
        default: keychain.refresh()
        }
        do {
            return .success(try route(decoded, sender: sender))
        } catch let error as SecretServiceError {
            return .failure(error)
        } catch {
            return .failure(SecretServiceError.from(error, what: decoded.target.path))
        }
    }

    private func route(_ decoded: DecodedCall, sender: String) throws -> CallReply {
        let target = decoded.target
        switch decoded.call {
        case .introspect:
            return .value(.tuple([.string(try introspect(target))]))
        case .getProperty(let interface, let name):
            return .value(.tuple([.variant(try property(target, interface: interface, name: name, sender: sender))]))
        case .getAllProperties(let interface):
            let all = try properties(target, interface: interface, sender: sender)
            return .value(.tuple([Variant.array(of: "{sv}", all.map { .dictEntry(.string($0.0), .variant($0.1)) })]))
        case .setProperty(let interface, let name, let value):
            try setProperty(target, interface: interface, name: name, value: value)
            return .value(.tuple([]))
        default:
            break
        }
        switch target {
        case .service: return try serviceCall(decoded.call, sender: sender)
        case .collection(let name): return try collectionCall(try collection(named: name, path: target.path), decoded.call, sender: sender)
        case .alias(let alias): return try collectionCall(try collection(alias: alias, path: target.path), decoded.call, sender: sender)
        case .item, .aliasItem: return try itemCall(try item(at: target), decoded.call, sender: sender)
        case .session(let id): return .value(try sessionCall(id, decoded.call, sender: sender))
        case .prompt(let id): return .value(try promptCall(id, decoded.call, sender: sender))
        case .node, .unknown: throw SecretServiceError.noSuchObject(target.path)
        }
    }

    // MARK: Names and paths

    func collectionPath(_ name: String) -> String { ObjectPath.collection(name).path }

    func itemPath(_ info: ItemInfo) -> String { ObjectPath.item(collection: info.collection, item: info.ref.element).path }

    func itemPath(_ entry: ItemEntry) -> String { ObjectPath.item(collection: entry.collection, item: entry.ref.element).path }

    /// The collection `name`, when it exists.
    func collection(named name: String, path: String) throws -> String {
        guard try keychain.collectionExists(name) else { throw SecretServiceError.noSuchObject(path) }
        return name
    }

    /// The collection an alias names.
    func collection(alias: String, path: String) throws -> String {
        guard let name = try resolveAlias(alias) else { throw SecretServiceError.noSuchObject(path) }
        return name
    }

    /// The collection `alias` names, or nil.
    func resolveAlias(_ alias: String) throws -> String? {
        switch alias {
        case CollectionName.login: return CollectionName.login
        case CollectionName.session: return CollectionName.session
        default:
            if let stored = try keychain.store.foreignAliases()[alias], try keychain.collectionExists(stored) { return stored }
            return alias == "default" ? CollectionName.login : nil
        }
    }

    /// The item at an item path (through a collection or an alias).
    func item(at target: ObjectPath) throws -> ItemInfo {
        let collection: String
        let element: String
        switch target {
        case .item(let name, let item): (collection, element) = (name, item)
        case .aliasItem(let alias, let item):
            guard let name = try resolveAlias(alias) else { throw SecretServiceError.noSuchObject(target.path) }
            (collection, element) = (name, item)
        default: throw SecretServiceError.noSuchObject(target.path)
        }
        guard let ref = ItemRef(element: element), let info = try keychain.item(ref, in: collection) else {
            throw SecretServiceError.noSuchObject(target.path)
        }
        return info
    }

    /// The item at `path`, or nil when the path names no item that exists.
    func item(path: String) -> ItemInfo? {
        try? item(at: ObjectPath(path))
    }

    /// As `item(path:)`, without the label and attributes (for reading its secret).
    func entry(path: String) -> ItemEntry? {
        let collection: String?
        let element: String
        switch ObjectPath(path) {
        case .item(let name, let item): (collection, element) = (name, item)
        case .aliasItem(let alias, let item): (collection, element) = ((try? resolveAlias(alias)) ?? nil, item)
        default: return nil
        }
        guard let collection, let ref = ItemRef(element: element) else { return nil }
        return (try? keychain.entry(ref, in: collection)) ?? nil
    }

    /// The session `path` names, when it belongs to `sender`.
    func session(_ path: String, for sender: String) throws -> SessionObject {
        guard case .session(let id) = ObjectPath(path), let session = sessions[id], session.owner == sender else {
            throw SecretServiceError.noSession(path)
        }
        return session
    }

    func newSessionID() -> String {
        defer { nextSession += 1 }
        return "s\(nextSession)"
    }

    func newPromptID() -> String {
        defer { nextPrompt += 1 }
        return "p\(nextPrompt)"
    }

    // MARK: Reading a secret

    /// The secret of `info` for `sender`: an unlocked item's, or a gated item's that a prompt
    /// authorized for this client's next read (used up here). Nil when it is locked to `sender`.
    func secret(of info: ItemInfo, for sender: String) throws -> SecureBytes? {
        try secret(of: info.ref, info.access, for: sender)
    }

    func secret(of entry: ItemEntry, for sender: String) throws -> SecureBytes? {
        try secret(of: entry.ref, entry.access, for: sender)
    }

    private func secret(of ref: ItemRef, _ access: ItemAccess, for sender: String) throws -> SecureBytes? {
        if let granted = authorized[sender]?.removeValue(forKey: ref) { return granted }
        switch access {
        case .unlocked(let item): return try item.secret()
        case .locked: return nil
        }
    }

    // MARK: Signals and clients

    func emit(_ path: String, _ interface: String, _ member: String, _ arguments: [BusValue]) {
        signals.append((path, interface, member, .tuple(arguments)))
    }

    /// A connection left the bus: its sessions close, its prompts end, its authorizations go.
    package func clientLeft(_ name: String) {
        sessions = sessions.filter { $0.value.owner != name }
        // Its prompts stop asking: an authentication under way opens nothing.
        for prompt in prompts.values where prompt.owner == name { prompt.cancellation.cancel() }
        prompts = prompts.filter { $0.value.owner != name }
        authorized.removeValue(forKey: name)
    }

    /// Reports the prompts workers finished; queues their Completed signals.
    package func collectOutcomes() {
        let finished = outcomes.take()
        for outcome in finished { complete(outcome) }
        keychain.refresh(force: !finished.isEmpty)
        let locked = keychain.isLocked
        if locked != lastLocked {
            lastLocked = locked
            if locked { authorized.removeAll() }
            emit(ObjectPath.service.path, SecretInterface.service, "CollectionChanged", [.objectPath(collectionPath(CollectionName.login))])
            // libsecret's proxies keep the properties they read, and update them from this signal.
            emit(collectionPath(CollectionName.login), SecretInterface.properties, "PropertiesChanged",
                 [.string(SecretInterface.collection), Variant.array(of: "{sv}", [.dictEntry(.string("Locked"), .variant(.boolean(locked)))]),
                  Variant.array(of: "s", [])])
        }
    }

    /// Takes the queued signals.
    package func takeSignals() -> [(String, String, String, BusValue)] {
        defer { signals.removeAll() }
        return signals
    }

    package var hasPromptsRunning: Bool { prompts.values.contains { $0.started } }
}
