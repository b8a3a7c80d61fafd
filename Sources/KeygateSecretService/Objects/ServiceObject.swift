// org.freedesktop.Secret.Service at /org/freedesktop/secrets: sessions, searching every
// collection (unlocked and locked lists), reading several secrets at once, Unlock and Lock, the
// aliases (`default` is the keychain's `login` collection unless a client points it elsewhere;
// `login` and `session` are fixed), CreateCollection, and the Collections property.
import Keygate
import KeygateCore

extension SecretServiceHost {
    func serviceCall(_ call: SecretServiceCall, sender: String) throws -> CallReply {
        switch call {
        case .openSession(let algorithm, let input):
            let (session, output) = try SessionObject.open(id: newSessionID(), owner: sender, algorithm: algorithm, input: input)
            sessions[session.id] = session
            return .value(.tuple([.variant(output), .objectPath(session.path)]))

        case .searchItems(let attributes):
            var unlocked: [String] = [], locked: [String] = []
            for entry in try keychain.entries(in: nil, matching: attributes) {
                if entry.access.isLocked && authorized[sender]?[entry.ref] == nil { locked.append(itemPath(entry)) } else { unlocked.append(itemPath(entry)) }
            }
            return .itemLists(unlocked: unlocked, locked: locked)

        case .getSecrets(let items, let sessionPath):
            let session = try session(sessionPath, for: sender)
            var entries: [(path: String, secret: OutgoingSecret)] = []
            // An item that is locked to this client, or gone, is left out (as other providers do).
            for path in items {
                guard let entry = self.entry(path: path), let secret = try secret(of: entry, for: sender) else { continue }
                entries.append((path, try session.encode(secret, contentType: entry.contentType)))
            }
            return .secrets(entries)

        case .unlock(let objects):
            return .value(try unlock(objects, sender: sender))

        case .lock(let objects):
            var locked: [String] = []
            var lockKeychain = false
            for path in objects {
                switch ObjectPath(path) {
                case .collection(let name) where name != CollectionName.session:
                    if try keychain.collectionExists(name) { lockKeychain = true; locked.append(path) }
                case .alias(let alias):
                    if let name = try resolveAlias(alias), name != CollectionName.session { lockKeychain = true; locked.append(path) }
                case .item, .aliasItem:
                    if let info = item(path: path), info.collection != CollectionName.session {
                        lockKeychain = true
                        locked.append(path)
                    }
                default: continue
                }
            }
            if lockKeychain {
                keychain.lock()
                authorized.removeAll()
                collectOutcomes()
            }
            return .value(.tuple([Variant.objectPaths(locked), .objectPath("/")]))

        case .readAlias(let name):
            guard let collection = try resolveAlias(name) else { return .value(.tuple([.objectPath("/")])) }
            return .value(.tuple([.objectPath(collectionPath(collection))]))

        case .setAlias(let name, let path):
            guard ObjectPath.isElement(name) else { throw SecretServiceError.invalid("an alias is a name of [A-Za-z0-9_]: \(name)") }
            guard name != CollectionName.login, name != CollectionName.session else {
                throw SecretServiceError(SecretServiceErrorName.notSupported, "the alias \(name) always names the \(name) collection")
            }
            if path == "/" {
                try keychain.store.writeForeignAlias(name, collection: nil)
                return .value(.tuple([]))
            }
            let collection: String
            switch ObjectPath(path) {
            case .collection(let named): collection = try self.collection(named: named, path: path)
            case .alias(let alias): collection = try self.collection(alias: alias, path: path)
            default: throw SecretServiceError.noSuchObject(path)
            }
            try keychain.store.writeForeignAlias(name, collection: collection)
            return .value(.tuple([]))

        case .createCollection(let label, let alias):
            if !alias.isEmpty, let existing = try resolveAlias(alias) {
                return .value(.tuple([.objectPath(collectionPath(existing)), .objectPath("/")]))
            }
            guard alias.isEmpty || ObjectPath.isElement(alias) else {
                throw SecretServiceError.invalid("an alias is a name of [A-Za-z0-9_]: \(alias)")
            }
            let name = try newCollectionName(label)
            let now = UInt64(WallClock.seconds)
            try keychain.store.writeForeignCollection(ForeignCollectionRow(name: name, label: label, created: now, modified: now))
            if !alias.isEmpty { try keychain.store.writeForeignAlias(alias, collection: name) }
            emit(ObjectPath.service.path, SecretInterface.service, "CollectionCreated", [.objectPath(collectionPath(name))])
            return .value(.tuple([.objectPath(collectionPath(name)), .objectPath("/")]))

        default:
            throw SecretServiceError(SecretServiceErrorName.failed, "not a method of the service")
        }
    }

    /// Unlock: what is open already is in the first list; for the rest, a prompt that unlocks the
    /// keychain and authorizes each gated item.
    private func unlock(_ objects: [String], sender: String) throws -> BusValue {
        var unlocked: [String] = []
        var pending: [String] = []
        var needsKeychain = false
        var gated: [AuthorizationRequest] = []
        let client = describeClient(sender)
        for path in objects {
            switch ObjectPath(path) {
            case .collection, .alias:
                let name: String
                if case .collection(let named) = ObjectPath(path) {
                    guard (try? keychain.collectionExists(named)) == true else { continue }
                    name = named
                } else if case .alias(let alias) = ObjectPath(path), let resolved = try resolveAlias(alias) {
                    name = resolved
                } else { continue }
                if keychain.isLocked(collection: name) { needsKeychain = true; pending.append(path) } else { unlocked.append(path) }
            case .item, .aliasItem:
                guard let info = item(path: path) else { continue }
                switch info.access {
                case .unlocked: unlocked.append(path)
                case .locked(let locked):
                    if authorized[sender]?[info.ref] != nil { unlocked.append(path); continue }
                    if locked.reason == .keychainLocked {
                        needsKeychain = true
                    } else {
                        guard let opening = try keychain.gatedOpening(info.ref) else { continue }
                        gated.append(AuthorizationRequest(ref: info.ref, path: path, label: info.label, attributes: info.attributes,
                                                          client: sender, clientPID: client.pid, clientProgram: client.program,
                                                          windowID: "", opening: opening))
                    }
                    pending.append(path)
                }
            default: continue
            }
        }
        // An item locked with the keychain may turn out to be gated once it is open: it is asked for then.
        guard !pending.isEmpty else { return .tuple([Variant.objectPaths(unlocked), .objectPath("/")]) }
        let prompt = PromptObject(id: newPromptID(), owner: sender, unlockKeychain: needsKeychain, authorize: gated,
                                  objects: unlocked + pending, cancellation: PromptCancellation())
        prompts[prompt.id] = prompt
        return .tuple([Variant.objectPaths(unlocked), .objectPath(prompt.path)])
    }

    /// A new collection's name, from its label: lower-case letters, digits and _, made unique.
    private func newCollectionName(_ label: String) throws -> String {
        var base = String(label.lowercased().unicodeScalars.map { scalar -> Character in
            let c = Character(scalar)
            return (c.isASCII && (c.isLetter || c.isNumber)) ? c : "_"
        }.prefix(32))
        if base.isEmpty || base == CollectionName.login || base == CollectionName.session { base = "collection" }
        let taken = Set(try keychain.createdCollections().map(\.name))
        if !taken.contains(base) { return base }
        var n = 2
        while taken.contains("\(base)\(n)") { n += 1 }
        return "\(base)\(n)"
    }

    /// The service's properties.
    func serviceProperties() throws -> [(String, BusValue)] {
        let names = [CollectionName.login, CollectionName.session] + (try keychain.createdCollections().map(\.name))
        return [("Collections", Variant.objectPaths(names.map(collectionPath)))]
    }
}
