// The ItemStore over the Secret Service (org.freedesktop.Secret.Service on the session bus):
// Keygate's items live in the default collection under the "io.keygate.Item" schema (the
// xdg:schema attribute libsecret writes, so items stay readable by secret-tool and older
// Keygate builds). Talks D-Bus itself through SecretServiceConnection (one connection, one
// plain session, reused), so a read is SearchItems, then the item's properties and its secret
// together; a read of an item this process read before sends those with the search, one wait
// (ServiceCalls.items). Every call has its own deadline; a locked collection is reported as locked
// (never as "not found"). A call answered with a prompt (KeePassXC's CreateItem and Delete)
// has it completed by SecretServicePrompt. Attribute mapping is ItemAttributeCodec's; errors
// are worded by SecretServiceFailure.
import KeygateCore

package final class SecretServiceStore: ItemStore {
    let deadline: Duration
    private let connection: SecretServiceConnection
    /// Whether a locked default collection may be unlocked through the provider's prompt.
    let unlockPrompt: UnlockPromptSetting
    /// How long a prompt shown as a window is waited for.
    let windowLimit: Duration
    /// How many items' secrets one GetSecrets asks for. gnome-keyring's cost per path grows with
    /// the keyring (1.15 ms an item at 10,000 items, 0.1 ms at 1,000): one GetSecrets for
    /// a list of 10,000 took 11.5 s, past any one call's deadline. 32 paths a call keep a whole
    /// window of them (SecretServiceConnection.window) within 5 s up to about 30,000 items.
    static let secretsPerCall = 32
    let secretsPerCall: Int

    /// A store on the session bus; the unlock prompt as the caller's configuration says (the CLI's
    /// --no-unlock-prompt, else KEYGATE_UNLOCK_PROMPT: KeychainOperations decides, once; `auto`
    /// is what an unset KEYGATE_UNLOCK_PROMPT means).
    /// `environment`: the edge's, passed down (the session bus, the display, the test hooks).
    init(deadline: Duration = .seconds(5), unlockPrompt: UnlockPromptSetting = .auto, environment: KeygateEnvironment) {
        self.deadline = deadline
        connection = .shared
        connection.use(environment)
        self.unlockPrompt = unlockPrompt
        windowLimit = SecretServicePrompt.windowLimit
        secretsPerCall = Self.secretsPerCall
    }

    /// A store on its own connection (tests: a private bus with one provider on it).
    package init(deadline: Duration = .seconds(5), connection: SecretServiceConnection, unlockPrompt: UnlockPromptSetting = .never,
         windowLimit: Duration = SecretServicePrompt.windowLimit, secretsPerCall: Int = SecretServiceStore.secretsPerCall) {
        self.deadline = deadline
        self.connection = connection
        self.unlockPrompt = unlockPrompt
        self.windowLimit = windowLimit
        self.secretsPerCall = max(1, secretsPerCall)
    }

    /// Who provides the Secret Service (for messages and doctor).
    package func provider() -> SecretServiceProvider { connection.provider(ServiceDeadline(deadline)) }

    private var call: ServiceCalls {
        ServiceCalls(connection: connection, deadline: ServiceDeadline(deadline), windowLimit: windowLimit,
                     secretsPerCall: secretsPerCall, windowRefusal: { [self] in windowRefusal() })
    }

    /// Nil when a provider's window may be shown now (the unlock prompt is allowed and the
    /// provider can show one); else why not, for the message.
    private func windowRefusal() -> String? {
        let provider = self.provider()
        if unlockPrompt == .never {
            return "the unlock prompt is off (--no-unlock-prompt, or \(UnlockPromptSetting.variable)=never)"
        }
        guard unlockPrompt.allows(provider, display: connection.environment.hasDisplay), connection.canPrompt(provider, ServiceDeadline(deadline)) else {
            return "no window can be shown here (no display)"
        }
        return nil
    }

    /// Runs `body`; when it meets a locked default collection, asks the provider to unlock it
    /// (Service.Unlock) and runs `body` once more if it did, as libsecret does. A collection that
    /// opens without a window (gnome-keyring's unencrypted keyring) opens whatever the setting;
    /// one that answers with a prompt (a password to type) gets a window only where the unlock
    /// prompt is allowed and one can be shown, and its prompt is dismissed otherwise.
    /// KeePassXC with "Unlock before search" (its default) holds a search of a locked database
    /// until its own unlock dialog is answered, so there a search that timed out on a locked
    /// collection counts as meeting it locked.
    private func unlockingIfAllowed<R>(_ body: () throws -> R) throws -> R {
        if unlockPrompt == .never { try refuseALockedCollection() }
        do {
            return try outlastingARestart(body)
        } catch let error as KeychainError where isLocked(error) {
            let provider = self.provider()
            // Without a window, a failed Unlock leaves the locked error as it was: it says what to do.
            let unlocked = unlockPrompt.allows(provider, display: connection.environment.hasDisplay) && connection.canPrompt(provider, ServiceDeadline(deadline))
                ? try call.unlockDefaultCollection(showingWindow: true)
                : (try? call.unlockDefaultCollection(showingWindow: false)) ?? false
            guard unlocked else { throw error }
            return try outlastingARestart(body)
        }
    }

    /// With the unlock prompt off, a locked default collection is found before anything is
    /// searched (one property read): KeePassXC's default "Unlock before search" would otherwise
    /// hold the search and open its unlock window, which nobody is to answer. A collection that
    /// opens without a window (an unencrypted keyring) is opened; any other is the locked error,
    /// at once. Service.Unlock alone shows nothing: the prompt it answers with is dismissed
    /// before Prompt.Prompt is ever called.
    private func refuseALockedCollection() throws {
        let collection: String
        do {
            collection = try connection.defaultCollection(ServiceDeadline(deadline))
        } catch let error as KeychainError where error.reason == .noDefaultCollection {
            return  // the operation itself reports it (after gnome-keyring's restart pauses)
        }
        guard try call.collectionProperties(collection).lookup("Locked")?.boolean != false else { return }
        guard (try? call.unlockDefaultCollection(showingWindow: false)) == true else {
            throw SecretServiceFailure.locked(provider())
        }
    }

    /// How long to wait before asking gnome-keyring again for a default collection it did not
    /// name: 20, 50 and 100 ms, 170 ms in all.
    static let rereadPauses: [Duration] = [.milliseconds(20), .milliseconds(50), .milliseconds(100)]

    /// Runs `body`, again after a pause when gnome-keyring answered that there is no default
    /// collection. gnome-keyring 42 now and then crashes under many writers, and the session bus
    /// starts it again; the new daemon answers ReadAlias("default") with "/" until it has read
    /// its keyrings, then holds an unencrypted one locked until Service.Unlock (measured:
    /// docs/DECISIONS.md, "gnome-keyring crashes under many writers"). The error comes from the
    /// operation's first call, before anything is written, so running it again repeats nothing.
    /// It runs again on a new connection: gnome-keyring reads its alias file (keyrings/default)
    /// again for each new client. Other providers' "no default collection" is reported at once.
    private func outlastingARestart<R>(_ body: () throws -> R) throws -> R {
        for pause in Self.rereadPauses {
            do {
                return try body()
            } catch let error as KeychainError where error.reason == .noDefaultCollection && provider() == .gnomeKeyring {
                connection.forgetConnection()
                Pause.sleep(pause)
            }
        }
        return try body()
    }

    private func isLocked(_ error: KeychainError) -> Bool {
        if Self.isLockedCollection(error) { return true }
        guard error.reason == .secretServiceTimeout,
              provider() == .keePassXC, let collection = try? connection.defaultCollection(ServiceDeadline(deadline)) else {
            return false
        }
        return (try? call.collectionProperties(collection).lookup("Locked")?.boolean) == true
    }

    /// The daemon no longer knows the session (it restarted): by reason, never by message text
    /// (every "session bus" message mentions a session too).
    static func isStaleSession(_ error: KeychainError) -> Bool {
        error.reason == .staleSession
    }

    /// The default collection is locked (SecretServiceFailure.locked made the error).
    static func isLockedCollection(_ error: KeychainError) -> Bool {
        error.reason == .lockedCollection
    }

    /// Locks the default collection (Service.Lock, through its prompt where the provider asks one).
    func lockDefaultCollection() throws {
        try call.lockDefaultCollection()
    }

    /// A read whose provider quit during a call runs once more, on a new connection: the bus
    /// starts gnome-keyring again at the next call (it is D-Bus activatable, and 42.1 crashes
    /// now and then under many writers: docs/DECISIONS.md), and a read changed nothing. A write
    /// is not run again: exit 53 says the Secret Service quit while it was being done.
    /// A search answers "none" with no items, never with an error: an item-not-found error met on
    /// the way (a call about an object the provider no longer has) is a failure to look, not an
    /// answer, and is reported as one, so that no caller reads it as "no such item".
    package func search(_ query: ItemQuery, loadBlobs: Bool, detail: ItemDetail) throws -> [StoredItem] {
        try reportingLookupFailures {
            do {
                return try unlockingIfAllowed { try searchUnlocked(query, loadBlobs: loadBlobs, detail: detail) }
            } catch let error as KeychainError where error.reason == .providerQuit {
                connection.forgetConnection()
                return try unlockingIfAllowed { try searchUnlocked(query, loadBlobs: loadBlobs, detail: detail) }
            }
        }
    }

    package func searchWithoutWindows(_ query: ItemQuery) throws -> [StoredItem] {
        try reportingLookupFailures {
            do {
                return try unlockingIfAllowed { try searchUnlocked(query, loadBlobs: true, detail: .full, access: .secretsIfOpen) }
            } catch let error as KeychainError where error.reason == .providerQuit {
                connection.forgetConnection()
                return try unlockingIfAllowed { try searchUnlocked(query, loadBlobs: true, detail: .full, access: .secretsIfOpen) }
            }
        }
    }

    private func reportingLookupFailures<R>(_ body: () throws -> R) throws -> R {
        do {
            return try body()
        } catch let error as KeychainError where error.code == .itemNotFound {
            throw KeychainError.notAvailable(error.message + " (nothing was read: this is not an answer that the item is absent)")
        }
    }

    private func searchUnlocked(_ query: ItemQuery, loadBlobs: Bool, detail: ItemDetail,
                                access: ServiceCalls.Access? = nil) throws -> [StoredItem] {
        let call = self.call
        let access = access ?? (loadBlobs ? .secrets : .attributes)
        let wanted = ServiceCalls.detail(detail, for: query)
        // A read sends the reads of what the same search found last time with the search itself
        // (ServiceCalls.items): when the search finds exactly those items, they are read.
        let (paths, itemLocked, early) = try call.items(searching: call.withSchema(ItemAttributeCodec.encode(query)),
                                                        openingSession: loadBlobs, access: access,
                                                        readingAhead: loadBlobs ? wanted : nil)
        guard !paths.isEmpty || !itemLocked.isEmpty else { return [] }
        var (found, blobs) = try early ?? call.properties(of: paths, loadingSecrets: loadBlobs, detail: wanted)
        if loadBlobs {
            let withheld = found.map(\.path).filter { blobs[$0] == nil }
            if !withheld.isEmpty { blobs.merge(try call.secretsWithheld(withheld)) { new, _ in new } }
        }
        // Items locked one by one, read without their secrets: listed with a nil blob.
        let lockedFound = try call.properties(of: itemLocked, loadingSecrets: false, detail: wanted).found
        found += lockedFound
        let withoutSecret = Set(lockedFound.map(\.path))
        var out: [StoredItem] = []
        for (path, item, _) in ServiceCalls.newestPerIdentity(found.filter { query.matches($0.attributes) }) {
            guard loadBlobs, !withoutSecret.contains(path) else {
                out.append(StoredItem(attributes: item, blob: nil))
                continue
            }
            // No secret for a path whose properties were read, and none after `secretsWithheld`
            // asked why: deleted by another process in between.
            guard let blob = blobs[path] else { continue }
            out.append(StoredItem(attributes: item, blob: blob))
        }
        return out
    }

    /// Every item carries its dates in its attributes (ItemAttributeCodec.Key.created,
    /// .modified). With `replace`, an item whose attributes stay the same gets its new secret in
    /// place (one call: never half-written), then its new modification date (a second call: a
    /// process killed between the two leaves the new secret under the old date). When the
    /// attributes change (a new class or access control, which the sealed blob is bound to), the
    /// new item is created whole first, with the next generation and the old creation date, and
    /// the old one deleted after. A process killed between the two leaves two complete items;
    /// reads see only the newer generation (the write committed when its item was created),
    /// never a blob under attributes it was not sealed for, and the next replace removes the
    /// leftover.
    package func create(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws {
        do {
            try unlockingIfAllowed { try createUnlocked(attributes, blob: blob, replace: replace) }
        } catch let error as KeychainError where error.reason == .noDefaultCollection {
            guard try createDefaultCollection() else { throw error }
            try unlockingIfAllowed { try createUnlocked(attributes, blob: blob, replace: replace) }
        }
    }

    /// gnome-keyring with no keyring (a first login that handed it no password): a write makes
    /// the default collection as libsecret's callers do, CreateCollection with the "default"
    /// alias, whose prompt is gnome-keyring's new-keyring window (a password, typed twice). Only
    /// where a window can be shown; false when none may be, so the error says what to do.
    /// Not for KWallet: its CreateCollection makes a second wallet (KWalletLoginWallet.swift).
    private func createDefaultCollection() throws -> Bool {
        guard provider() == .gnomeKeyring, windowRefusal() == nil else { return false }
        SecretServicePrompt.windowNotice.withLock { $0 }?("""
            keygate: gnome-keyring has no default keyring yet: it asks, in a new keyring window, for the password of a new one \
            (\(Self.defaultCollectionLabel)), typed twice; your items are kept there
            """)
        let made = try call.createDefaultCollection(label: Self.defaultCollectionLabel)
        connection.forgetCollection()
        return made
    }

    /// The default collection's label where Keygate has gnome-keyring make one (gnome-keyring's
    /// own login keyring is "Login").
    static let defaultCollectionLabel = "Login"

    private func createUnlocked(_ attributes: ItemAttributes, blob: [UInt8], replace: Bool) throws {
        let call = self.call
        let exact = ItemQuery(exactly: attributes.identity)
        let paths = try call.unlockedItems(matching: exact, openingSession: true, access: .secrets)
        let matches = try call.properties(of: paths, loadingSecrets: false, detail: .full).found
            .filter { exact.matches($0.attributes) }
            .sorted { $0.generation > $1.generation }
        let label = ItemAttributeCodec.label(for: attributes)
        let encoded = ItemAttributeCodec.encode(attributes)
        let now = Self.now()
        let new = ItemAttributeCodec.recorded(encoded, label: label, created: now, modified: now)
        guard let (path, current, generation) = matches.first else {
            try call.createItem(attributes: new, label: label, secret: blob)
            return
        }
        guard replace else {
            throw KeychainError.duplicateItem("an item for \(attributes.identity.displayName) already exists: "
                                              + "update it, or delete it first")
        }
        let keepingDate = ItemAttributeCodec.recorded(encoded, label: label, created: current.created, modified: now)
        if ItemAttributeCodec.encode(current) == encoded {
            // The generation stays: a leftover of a killed replacement must still read as older.
            var inPlace = keepingDate
            if generation > 0 { inPlace[ItemAttributeCodec.Key.generation] = String(generation) }
            do {
                try call.setSecret(of: path, to: blob)
                try call.setProperty(of: path, "Attributes", Variant.stringDictionary(call.withSchema(inPlace)),
                                     action: "update the item's modification date")
                if current.label != label {
                    try call.setProperty(of: path, "Label", Variant.string(label), action: "update the item's label")
                }
            } catch let error as KeychainError where error.code == .itemNotFound {
                // Deleted by another process meanwhile: the write still happens.
                try call.createItem(attributes: new, label: label, secret: blob)
            }
        } else {
            var replacement = keepingDate
            replacement[ItemAttributeCodec.Key.generation] = String(generation + 1)
            try call.createItem(attributes: replacement, label: label, secret: blob)
            try call.deleteIfPresent(path)
        }
        for (extra, _, _) in matches.dropFirst() { try call.deleteIfPresent(extra) }
    }

    /// An item another program stored in the default collection (secret-tool, libsecret's callers):
    /// not under Keygate's schema, its secret as that program stored it (never sealed by Keygate).
    package struct ForeignItem: Sendable {
        package var attributes: [String: String]
        package var label: String
        package var secret: [UInt8]
    }

    /// The items other programs stored whose attributes include every one of `attributes` (as
    /// `secret-tool lookup` matches them), with their secrets; Keygate's own items are left out.
    package func foreignItems(matching attributes: [String: String]) throws -> [ForeignItem] {
        guard !attributes.isEmpty else { return [] }
        return try unlockingIfAllowed {
            let call = self.call
            let paths = try call.items(searching: attributes, openingSession: true, access: .secrets).open
            return try call.rawItems(paths).filter {
                $0.attributes[ItemAttributeCodec.Key.itemClass] == nil && $0.attributes["xdg:schema"] != ItemAttributeCodec.schemaName
            }
        }
    }

    @discardableResult
    package func delete(_ query: ItemQuery) throws -> Int {
        try unlockingIfAllowed { try deleteUnlocked(query) }
    }

    private func deleteUnlocked(_ query: ItemQuery) throws -> Int {
        let call = self.call
        let paths = try call.unlockedItems(matching: query, access: .secrets)
        let doomed = try call.properties(of: paths, loadingSecrets: false, detail: ServiceCalls.detail(.attributes, for: query))
            .found.filter { query.matches($0.attributes) }
        // One call at a time: gnome-keyring rewrites its file for each, and a deadline per call
        // lets a long healthy run finish while a daemon that stops answering still fails fast.
        // An item another process deleted meanwhile counts as deleted: it is gone either way.
        for (path, _, _) in doomed { try call.deleteIfPresent(path) }
        return doomed.count
    }

    /// The wall clock in whole seconds, as the Secret Service keeps its own dates.
    static func now() -> UInt64 { UInt64(max(0, WallClock.seconds)) }

    package func status() throws -> StoreStatus {
        let call = self.call
        let collection = try call.connection.defaultCollection(call.deadline)
        let properties = try call.collectionProperties(collection)
        let label = properties.lookup("Label")?.string ?? ""
        return StoreStatus(backend: "Secret Service (D-Bus, plain session over sealed blobs)",
                           collection: label.isEmpty ? collection : label,
                           locked: properties.lookup("Locked")?.boolean ?? true)
    }
}

/// The Secret Service calls of one store operation, each under `deadline`.
private struct ServiceCalls {
    let connection: SecretServiceConnection
    let deadline: ServiceDeadline
    let windowLimit: Duration
    let secretsPerCall: Int
    /// Nil when a window may be shown to grant access; else why not (SecretServiceStore.windowRefusal).
    let windowRefusal: () -> String?

    private typealias C = SecretServiceConnection

    /// What a caller does with the items it searched for: reads their attributes only (which
    /// a provider that locks items one by one still shows), or their secrets, or changes them.
    enum Access {
        case attributes
        case secrets
        /// Secrets where no window is needed: items locked one by one are left locked, apart.
        case secretsIfOpen
    }

    /// Adds the schema attribute libsecret writes and matches ("xdg:schema"), so that only
    /// Keygate's own items are seen.
    func withSchema(_ attributes: [String: String]) -> [String: String] {
        var out = attributes
        out["xdg:schema"] = ItemAttributeCodec.schemaName
        return out
    }

    /// Item paths in the order they were created: gnome-keyring numbers its items in creation
    /// order (".../login/7"), and SearchItems answers in its own hash order. Paths that are not
    /// numbered (KeePassXC's UUIDs) keep the provider's order, after the numbered ones.
    static func inCreationOrder(_ paths: [String]) -> [String] {
        guard paths.count > 1 else { return paths }
        func number(_ path: String) -> Int { path.split(separator: "/").last.flatMap { Int($0) } ?? Int.max }
        return paths.enumerated().sorted { (number($0.element), $0.offset) < (number($1.element), $1.offset) }.map(\.element)
    }

    /// The paths of Keygate's items in the default collection whose attributes match `query`
    /// (its label is matched later, client-side). One SearchItems, which answers unlocked and
    /// locked items apart: a locked match in a locked collection, or no match in one, is
    /// `.locked`. A locked match in an open collection is an item the provider locks for this
    /// client alone (KeePassXC's default ConfirmAccessItem): for `.attributes` it is returned as
    /// it is (its attributes can be read), and for `.secrets` it is unlocked first (`unlockItems`).
    func unlockedItems(matching query: ItemQuery, openingSession: Bool = false, access: Access) throws -> [String] {
        let (open, itemLocked) = try items(matching: query, openingSession: openingSession, access: access)
        return open + itemLocked
    }

    /// As `unlockedItems`, with the items left locked one by one (`.secretsIfOpen` only) apart.
    func items(matching query: ItemQuery, openingSession: Bool, access: Access) throws
        -> (open: [String], itemLocked: [String]) {
        try items(searching: withSchema(ItemAttributeCodec.encode(query)), openingSession: openingSession, access: access)
    }

    /// As `items(matching:)`, for these attributes exactly as given (no schema: other programs' items too).
    func items(searching attributes: [String: String], openingSession: Bool, access: Access) throws
        -> (open: [String], itemLocked: [String]) {
        let (open, itemLocked, _) = try items(searching: attributes, openingSession: openingSession, access: access,
                                              readingAhead: nil)
        return (open, itemLocked)
    }

    /// The most items a read's search sends the reads of with it (`readingAhead`): a read finds
    /// one, two where an update was killed between its two steps.
    static let readAheadLimit = 4

    /// As `items(searching:)`; with `readingAhead` (a read of secrets, at this detail), the
    /// attributes and secrets of the items the same search found last time on this connection
    /// are asked in the same wait as the search, behind it, and are the read's (`early`) when the
    /// search finds exactly those items, all open: one wait instead of two. Otherwise they are
    /// dropped, and the caller reads what the search found (`properties`), as without them. Either
    /// way the same replies go through the same checks (`takeProperties`), and the search alone
    /// says which items there are. Only where the provider is gnome-keyring, whose property
    /// reads and GetSecrets change nothing and ask nobody (GetSecrets leaves a locked item out),
    /// so that reading an item the search then does not return has no effect; other providers
    /// (KeePassXC can ask its user to allow a read) get the search alone first.
    func items(searching attributes: [String: String], openingSession: Bool, access: Access,
               readingAhead detail: ItemDetail?) throws
        -> (open: [String], itemLocked: [String], early: (found: [Found], blobs: [String: [UInt8]])?) {
        // A process's first call sends ReadAlias (and OpenSession, for a read) with the search:
        // one wait instead of three.
        let known = try connection.cached(deadline)
        var methods: [ServiceMethodCall] = []
        if known.collection == nil { methods.append(C.readDefaultAlias) }
        if openingSession, known.session == nil { methods.append(C.openSession) }
        methods.append(ServiceMethodCall(
            path: C.servicePath, interface: C.serviceInterface, method: "SearchItems",
            arguments: Variant.tuple([Variant.stringDictionary(attributes)]),
            replyType: "(aoao)", action: "search for items"))
        var guess: [String] = []
        if detail != nil, let session = known.session, known.collection != nil,
           let before = connection.lastFound(attributes), !before.isEmpty, before.count <= Self.readAheadLimit,
           connection.provider(deadline) == .gnomeKeyring {
            guess = before
            methods += propertyCalls(of: guess, loadingSecrets: true, session: session)
        }
        var results = try connection.calls(methods, deadline)
        let collection = try known.collection ?? connection.remember(collection: try results.removeFirst().get())
        if openingSession, known.session == nil { try connection.remember(session: try results.removeFirst().get()) }
        guard let searched = results.first else { throw SecretServiceFailure.map(nil, action: "search for items", deadline: deadline) }
        let reply = try searched.get()
        let prefix = collection + "/"
        // In creation order, which SecItemCopyMatching's kSecMatchLimitAll keeps (as Apple's does).
        let unlocked = Self.inCreationOrder((reply.child(0)?.strings ?? []).filter { $0.hasPrefix(prefix) })
        let locked = (reply.child(1)?.strings ?? []).filter { $0.hasPrefix(prefix) }
        if detail != nil { connection.remember(found: unlocked, for: attributes, on: known.bus) }
        if !locked.isEmpty {
            guard try collectionProperties(collection).lookup("Locked")?.boolean == false else {
                throw SecretServiceFailure.locked(connection.provider(deadline))
            }
            switch access {
            case .attributes: return (unlocked + locked, [], nil)
            case .secrets:
                try unlockItems(locked)
                return (unlocked + locked, [], nil)
            case .secretsIfOpen: return (unlocked, locked, nil)
            }
        }
        if unlocked.isEmpty {
            // Nothing found: "not found" only if the collection is open (and still exists).
            let properties: BusValue
            do {
                properties = try collectionProperties(collection)
            } catch let error as KeychainError where error.code == .itemNotFound {
                connection.forgetCollection()
                throw KeychainError.notAvailable("the default keyring collection went away: try again")
            }
            if properties.lookup("Locked")?.boolean != false { throw SecretServiceFailure.locked(connection.provider(deadline)) }
        }
        guard let detail, !guess.isEmpty, guess == unlocked else { return (unlocked, [], nil) }
        return (unlocked, [], try takeProperties(Array(results.dropFirst()), of: unlocked, loadingSecrets: true, detail: detail))
    }

    /// Service.Unlock of items the provider locks one by one, as secret-tool does: the provider
    /// answers with a prompt (KeePassXC: its "Access Request" window), completed where a window
    /// may be shown and dismissed otherwise. Throws SecretServiceFailure.lockedItem when access
    /// is not granted; the user's "Deny" is the user's cancel (completePrompt).
    func unlockItems(_ paths: [String]) throws {
        let reply = try connection.call(ServiceMethodCall(
            path: C.servicePath, interface: C.serviceInterface, method: "Unlock",
            arguments: Variant.tuple([Variant.objectPaths(paths)]), replyType: "(aoo)",
            action: "unlock the item"), deadline)
        var opened = Set(reply.child(0)?.strings ?? [])
        if paths.allSatisfy(opened.contains) { return }
        let provider = connection.provider(deadline)
        guard let prompt = reply.child(1)?.string, prompt != "/" else {
            throw SecretServiceFailure.lockedItem(provider, why: "it refused to unlock the item")
        }
        if let refusal = windowRefusal() {
            dismiss(prompt)
            throw SecretServiceFailure.lockedItem(provider, why: refusal)
        }
        let result = try connection.completePrompt(prompt, action: "allow Keygate to read the item", deadline,
                                                   windowLimit: windowLimit)
        opened.formUnion(result?.strings ?? [])
        guard paths.allSatisfy(opened.contains) else {
            throw SecretServiceFailure.lockedItem(provider, why: "its window did not grant the access")
        }
    }

    /// Prompt.Dismiss, so that no window waits for a call that gave up; its failure changes nothing.
    func dismiss(_ prompt: String) {
        _ = try? connection.call(ServiceMethodCall(
            path: prompt, interface: C.promptInterface, method: "Dismiss", arguments: nil, replyType: "()",
            action: "dismiss the prompt"), deadline)
    }

    func collectionProperties(_ collection: String) throws -> BusValue {
        let reply = try connection.call(getAll(collection, C.collectionInterface, action: "read the collection's state"),
                                        deadline)
        guard let properties = reply.child(0) else { throw SecretServiceFailure.map(nil, action: "read the collection's state", deadline: deadline) }
        return properties
    }

    private func getAll(_ path: String, _ interface: String, action: String) -> ServiceMethodCall {
        ServiceMethodCall(path: path, interface: C.propertiesInterface, method: "GetAll",
                          arguments: Variant.tuple([Variant.string(interface)]), replyType: "(a{sv})", action: action)
    }

    /// An item as found: its D-Bus path, its attributes, and its generation (0 unless it
    /// replaced another item of the same identity).
    typealias Found = (path: String, attributes: ItemAttributes, generation: UInt64)

    /// One item per identity, the newest generation where a killed update left two; the order
    /// of first appearance is kept.
    static func newestPerIdentity(_ found: [Found]) -> [Found] {
        // A read finds one item: nothing to merge (and no dictionary keyed by ItemIdentity to
        // instantiate, which costs a runtime conformance lookup).
        if found.count <= 1 { return found }
        var index: [ItemIdentity: Int] = [:]
        var out: [Found] = []
        for item in found {
            if let at = index[item.attributes.identity] {
                if item.generation > out[at].generation { out[at] = item }
            } else {
                index[item.attributes.identity] = out.count
                out.append(item)
            }
        }
        return out
    }

    /// The detail a search reads: a query that matches a label needs the label read.
    static func detail(_ wanted: ItemDetail, for query: ItemQuery) -> ItemDetail {
        query.label != nil ? .full : wanted
    }

    /// The attributes of the items in `paths` (in order) and, when asked, their secrets (by
    /// path): one `Properties.Get` of `Attributes` per item (never `GetAll`, which also reads
    /// `Locked`, which the search already answered, and costs the sum), and one GetSecrets per
    /// `secretsPerCall` items, sent together. The label and the dates are in the attributes
    /// (ItemAttributeCodec.Key.label, .created, .modified); for `.full`, an item an earlier
    /// Keygate or another tool wrote without them has them read from its own properties after
    /// (`serviceProperties`). An item deleted by another process between the search and these
    /// calls is left out, not an error.
    func properties(of paths: [String], loadingSecrets: Bool, detail: ItemDetail) throws
        -> (found: [Found], blobs: [String: [UInt8]]) {
        guard !paths.isEmpty else { return ([], [:]) }
        let session = loadingSecrets ? try connection.session(deadline) : ""
        let results = try connection.calls(propertyCalls(of: paths, loadingSecrets: loadingSecrets, session: session), deadline)
        return try takeProperties(results, of: paths, loadingSecrets: loadingSecrets, detail: detail)
    }

    /// The calls of `properties(of:)`: each item's Attributes, then GetSecrets of `secretsPerCall`
    /// items at a time over `session` when `loadingSecrets`.
    private func propertyCalls(of paths: [String], loadingSecrets: Bool, session: String) -> [ServiceMethodCall] {
        let chunkCount = loadingSecrets ? (paths.count + secretsPerCall - 1) / secretsPerCall : 0
        var methods: [ServiceMethodCall] = []
        methods.reserveCapacity(paths.count + chunkCount)
        for path in paths { methods.append(getProperty(path, "Attributes")) }
        for chunk in 0..<chunkCount { methods.append(getSecrets(secretsChunk(chunk, of: paths), session: session)) }
        return methods
    }

    /// What `properties(of:)` returns, from the replies to its calls (`propertyCalls`), in order.
    private func takeProperties(_ results: [ServiceReply], of paths: [String], loadingSecrets: Bool, detail: ItemDetail) throws
        -> (found: [Found], blobs: [String: [UInt8]]) {
        let chunkCount = loadingSecrets ? (paths.count + secretsPerCall - 1) / secretsPerCall : 0
        guard results.count == paths.count + chunkCount else {
            throw SecretServiceFailure.map(nil, action: "read an item's attributes", deadline: deadline)
        }
        let secretsAt = paths.count
        var found: [Found] = []
        var incomplete: [Int] = []   // indices in `found` of items whose attributes lack the label or a date
        for (index, path) in paths.enumerated() {
            let entries: [String: String]
            switch results[index] {
            case .success(let reply): entries = (reply.child(0)?.unboxed ?? .other("v")).stringDictionary
            case .failure(let error) where error.code == .itemNotFound: continue
            case .failure(let error): throw error
            }
            let generation = entries[ItemAttributeCodec.Key.generation].flatMap { UInt64($0) } ?? 0
            let item = try decode(entries, label: "", created: 0, modified: 0)
            if case .full = detail, entries[ItemAttributeCodec.Key.label] == nil || item.created == 0 || item.modified == 0 {
                incomplete.append(found.count)
            }
            found.append((path, item, generation))
        }
        if !incomplete.isEmpty { try serviceProperties(of: &found, at: incomplete) }
        guard loadingSecrets else { return (found, [:]) }
        var blobs: [String: [UInt8]] = [:]
        var freshSession: String?
        var foundPaths: Set<String>?   // made on the first retry only: a plain read never needs it
        for chunk in 0..<chunkCount {
            var result = results[secretsAt + chunk]
            if case .failure(let error) = result, SecretServiceStore.isStaleSession(error) || error.code == .itemNotFound {
                // The daemon restarted and forgot the session, or an item vanished: once more, with
                // a fresh session if needed (one for all chunks) and only the items still there.
                if SecretServiceStore.isStaleSession(error), freshSession == nil {
                    connection.forgetSession()
                    freshSession = try connection.session(deadline)
                }
                let stillThere = foundPaths ?? Set(found.map { $0.path })
                foundPaths = stillThere
                let still = secretsChunk(chunk, of: paths).filter { stillThere.contains($0) }
                guard !still.isEmpty else { continue }
                let session = try freshSession ?? connection.session(deadline)
                result = try connection.calls([getSecrets(still, session: session)], deadline).first ?? result
            }
            try Self.collectSecrets(result, into: &blobs)
        }
        return (found, blobs)
    }

    /// Adds the secrets a GetSecrets `result` holds to `secrets`, by item path. Items that
    /// vanished since they were found (itemNotFound) add nothing; any other failure is thrown.
    private static func collectSecrets(_ result: ServiceReply, into secrets: inout [String: [UInt8]]) throws {
        switch result {
        case .success(let reply): collectSecrets(reply, into: &secrets)
        case .failure(let error) where error.code == .itemNotFound: break
        case .failure(let error): throw error
        }
    }

    /// Adds the secrets a GetSecrets reply (`a{o(oayays)}`) holds to `secrets`, by item path.
    private static func collectSecrets(_ reply: BusValue, into secrets: inout [String: [UInt8]]) {
        for entry in reply.child(0)?.children ?? [] {
            guard let path = entry.child(0)?.string, let value = entry.child(1)?.child(2) else { continue }
            secrets[path] = value.bytes
        }
    }

    /// The secrets of items whose attributes were just read but whose secrets GetSecrets left out.
    /// gnome-keyring 42 answers GetSecrets for a locked item as for a missing one: success, without
    /// the item (measured: docs/DECISIONS.md, "A read never answers not found for an item it could
    /// not look at"). So a collection locked between the search and the read (another client's
    /// Service.Lock, or a daemon that crashed and came back locked) read as "no such item". Each
    /// such item is asked whether it is locked: locked is the locked error (which the store's
    /// unlock then handles); gone is gone (deleted meanwhile: left out); open is asked for its
    /// secret again. An item still listed, open and without a secret after three rounds is an
    /// error, never absent.
    func secretsWithheld(_ paths: [String]) throws -> [String: [UInt8]] {
        var blobs: [String: [UInt8]] = [:]
        var waiting = paths
        for _ in 0..<3 {
            let lockedness = try connection.calls(waiting.map { getProperty($0, "Locked") }, deadline)
            var open: [String] = []
            for (index, path) in waiting.enumerated() {
                switch lockedness[index] {
                case .success(let reply):
                    guard (reply.child(0)?.unboxed ?? .other("v")).boolean == false else {
                        throw SecretServiceFailure.locked(connection.provider(deadline))
                    }
                    open.append(path)
                case .failure(let error) where error.code == .itemNotFound: continue
                case .failure(let error): throw error
                }
            }
            guard !open.isEmpty else { return blobs }
            let session = try connection.session(deadline)
            for chunk in 0..<((open.count + secretsPerCall - 1) / secretsPerCall) {
                let reply = try connection.call(getSecrets(secretsChunk(chunk, of: open), session: session), deadline)
                Self.collectSecrets(reply, into: &blobs)
            }
            waiting = open.filter { blobs[$0] == nil }
            if waiting.isEmpty { return blobs }
        }
        throw KeychainError.notAvailable("""
            the Secret Service listed an item and read its attributes, but gave no secret for it, three times, and does not say \
            it is locked: check that \(connection.provider(deadline).daemonName) is healthy, then try again
            """)
    }

    /// Fills in the label and the dates of the items at `indices` in `found` (written by an
    /// earlier Keygate, or by another tool: not in their attributes) from the Secret Service's
    /// `Label`, `Created` and `Modified`. An item deleted meanwhile is left out.
    private func serviceProperties(of found: inout [Found], at indices: [Int]) throws {
        let names = ["Label", "Created", "Modified"]
        var methods: [ServiceMethodCall] = []
        methods.reserveCapacity(indices.count * names.count)
        for index in indices {
            for name in names { methods.append(getProperty(found[index].path, name)) }
        }
        let results = try connection.calls(methods, deadline)
        var gone: [Int] = []
        items: for (n, index) in indices.enumerated() {
            var values: [BusValue] = []
            for result in results[(names.count * n)..<(names.count * (n + 1))] {
                switch result {
                case .success(let reply): values.append(reply.child(0)?.unboxed ?? .other("v"))
                case .failure(let error) where error.code == .itemNotFound:
                    gone.append(index)
                    continue items
                case .failure(let error): throw error
                }
            }
            if found[index].attributes.label?.isEmpty ?? true { found[index].attributes.label = values[0].string }
            if found[index].attributes.created == 0 { found[index].attributes.created = values[1].uint64 ?? 0 }
            if found[index].attributes.modified == 0 { found[index].attributes.modified = values[2].uint64 ?? 0 }
        }
        for index in gone.reversed() { found.remove(at: index) }
    }

    /// The paths of GetSecrets call number `chunk`: `secretsPerCall` of them, fewer in the last.
    private func secretsChunk(_ chunk: Int, of paths: [String]) -> [String] {
        guard paths.count > secretsPerCall else { return paths }
        let start = chunk * secretsPerCall
        return Array(paths[start..<min(start + secretsPerCall, paths.count)])
    }

    private func getProperty(_ path: String, _ name: String) -> ServiceMethodCall {
        ServiceMethodCall(path: path, interface: C.propertiesInterface, method: "Get",
                          arguments: Variant.tuple([Variant.string(C.itemInterface), Variant.string(name)]),
                          replyType: "(v)", action: "read an item's attributes")
    }

    /// Each item's attributes and label as stored, and its secret, for items other programs made.
    func rawItems(_ paths: [String]) throws -> [SecretServiceStore.ForeignItem] {
        guard !paths.isEmpty else { return [] }
        let session = try connection.session(deadline)
        var methods: [ServiceMethodCall] = []
        for path in paths {
            methods.append(getProperty(path, "Attributes"))
            methods.append(getProperty(path, "Label"))
        }
        methods.append(getSecrets(paths, session: session))
        let results = try connection.calls(methods, deadline)
        var secrets: [String: [UInt8]] = [:]
        try Self.collectSecrets(results[2 * paths.count], into: &secrets)
        var out: [SecretServiceStore.ForeignItem] = []
        for (index, path) in paths.enumerated() {
            guard case .success(let attributes) = results[2 * index], case .success(let label) = results[2 * index + 1],
                  let secret = secrets[path] else { continue }
            out.append(SecretServiceStore.ForeignItem(
                attributes: (attributes.child(0)?.unboxed ?? .other("v")).stringDictionary,
                label: (label.child(0)?.unboxed ?? .other("v")).string, secret: secret))
        }
        return out
    }

    private func getSecrets(_ paths: [String], session: String) -> ServiceMethodCall {
        ServiceMethodCall(path: C.servicePath, interface: C.serviceInterface, method: "GetSecrets",
                          arguments: Variant.tuple([Variant.objectPaths(paths), Variant.objectPath(session)]),
                          replyType: "(a{o(oayays)})", action: "read item secrets")
    }

    private func decode(_ entries: [String: String], label: String, created: UInt64, modified: UInt64) throws -> ItemAttributes {
        guard !entries.isEmpty else {
            throw KeychainError.notAvailable("the Secret Service sent an item without its attributes: check that "
                                             + "\(connection.provider(deadline).daemonName) is healthy, then try again")
        }
        guard let attributes = ItemAttributeCodec.decode(entries, label: label, created: created, modified: modified) else {
            let item = label.isEmpty ? "a keyring item" : "the keyring item \"\(label)\""
            throw KeychainError.decode("\(item) has \(ItemAttributeCodec.schemaName) attributes Keygate cannot read: "
                                       + "delete it with secret-tool or seahorse")
        }
        return attributes
    }

    /// A Secret struct (oayays) for the plain session: the sealed blob as it is.
    private func secret(_ blob: [UInt8], session: String) -> BusValue {
        Variant.tuple([Variant.objectPath(session), Variant.bytes([]), Variant.bytes(blob),
                       Variant.string("application/octet-stream")])
    }

    func createItem(attributes: [String: String], label: String, secret blob: [UInt8]) throws {
        let collection = try connection.defaultCollection(deadline)
        let session = try connection.session(deadline)
        let properties = Variant.array(of: "{sv}", [
            Variant.dictEntry(Variant.string(C.itemInterface + ".Label"), Variant.boxed(Variant.string(label))),
            Variant.dictEntry(Variant.string(C.itemInterface + ".Attributes"),
                              Variant.boxed(Variant.stringDictionary(withSchema(attributes)))),
        ])
        let reply = try connection.call(ServiceMethodCall(
            path: collection, interface: C.collectionInterface, method: "CreateItem",
            arguments: Variant.tuple([properties, secret(blob, session: session), Variant.boolean(false)]),
            replyType: "(oo)", action: "create the item"), deadline)
        // KeePassXC always answers with a prompt (the item comes in its Completed signal).
        if let prompt = reply.child(1)?.string, prompt != "/" {
            _ = try connection.completePrompt(prompt, action: "create the item", deadline, windowLimit: windowLimit)
        }
    }

    func setSecret(of path: String, to blob: [UInt8]) throws {
        let session = try connection.session(deadline)
        _ = try connection.call(ServiceMethodCall(
            path: path, interface: C.itemInterface, method: "SetSecret",
            arguments: Variant.tuple([secret(blob, session: session)]), replyType: "()",
            action: "update the item's secret"), deadline)
    }

    /// Sets one org.freedesktop.Secret.Item property (`value` is boxed as a variant).
    func setProperty(of path: String, _ name: String, _ value: BusValue, action: String) throws {
        _ = try connection.call(ServiceMethodCall(
            path: path, interface: C.propertiesInterface, method: "Set",
            arguments: Variant.tuple([Variant.string(C.itemInterface), Variant.string(name), Variant.boxed(value)]),
            replyType: "()", action: action), deadline)
    }

    /// Deletes the item; one another process deleted first counts as done.
    func deleteIfPresent(_ path: String) throws {
        do {
            try deleteItem(path)
        } catch let error as KeychainError where error.code == .itemNotFound {
            return
        }
    }

    func deleteItem(_ path: String) throws {
        let reply = try connection.call(ServiceMethodCall(
            path: path, interface: C.itemInterface, method: "Delete", arguments: nil, replyType: "(o)",
            action: "delete the item"), deadline)
        if let prompt = reply.child(0)?.string, prompt != "/" {
            _ = try connection.completePrompt(prompt, action: "delete the item", deadline, windowLimit: windowLimit)
        }
    }

    /// Service.Unlock of the default collection. A provider that needs no password unlocks it
    /// at once; one that does answers with a prompt (a window: the provider's unlock dialog),
    /// which is completed with `showingWindow`, and dismissed (Prompt.Dismiss) without, so that
    /// nothing is left waiting. True when the collection is unlocked after.
    func unlockDefaultCollection(showingWindow: Bool) throws -> Bool {
        let collection = try connection.defaultCollection(deadline)
        let reply = try connection.call(ServiceMethodCall(
            path: C.servicePath, interface: C.serviceInterface, method: "Unlock",
            arguments: Variant.tuple([Variant.objectPaths([collection])]), replyType: "(aoo)",
            action: "unlock the default collection"), deadline)
        if reply.child(0)?.strings.contains(collection) == true { return true }
        guard let prompt = reply.child(1)?.string, prompt != "/" else { return false }
        // kwalletd5's collection of a wallet already open (by pam_kwallet5 at login) reads locked
        // until a client completes this prompt, which it does with no window: completed whatever
        // the setting, within the call's deadline.
        let withoutAWindow = !showingWindow && connection.kWalletOpensWithoutAWindow(collection, deadline)
        guard showingWindow || withoutAWindow else {
            dismiss(prompt)
            return false
        }
        let result = try connection.completePrompt(prompt, action: "unlock the default collection", deadline,
                                                   allowWindow: showingWindow, windowLimit: windowLimit)
        if result?.strings.contains(collection) == true { return true }
        return try collectionProperties(collection).lookup("Locked")?.boolean == false
    }

    /// Service.CreateCollection with the "default" alias, completing its prompt (the provider's
    /// new-keyring window). True when the collection was made.
    func createDefaultCollection(label: String) throws -> Bool {
        let properties = Variant.array(of: "{sv}", [
            Variant.dictEntry(Variant.string(C.collectionInterface + ".Label"), Variant.boxed(Variant.string(label))),
        ])
        let reply = try connection.call(ServiceMethodCall(
            path: C.servicePath, interface: C.serviceInterface, method: "CreateCollection",
            arguments: Variant.tuple([properties, Variant.string("default")]), replyType: "(oo)",
            action: "create the default collection"), deadline)
        if let made = reply.child(0)?.string, made != "/" { return true }
        guard let prompt = reply.child(1)?.string, prompt != "/" else { return false }
        let result = try connection.completePrompt(prompt, action: "create the default collection", deadline,
                                                   windowLimit: windowLimit)
        return (result?.string).map { $0 != "/" && !$0.isEmpty } ?? false
    }

    /// Service.Lock of the default collection, completing its prompt (KeePassXC asks one).
    func lockDefaultCollection() throws {
        let collection = try connection.defaultCollection(deadline)
        let reply = try connection.call(ServiceMethodCall(
            path: C.servicePath, interface: C.serviceInterface, method: "Lock",
            arguments: Variant.tuple([Variant.objectPaths([collection])]), replyType: "(aoo)",
            action: "lock the default collection"), deadline)
        if let prompt = reply.child(1)?.string, prompt != "/" {
            _ = try connection.completePrompt(prompt, action: "lock the default collection", deadline, windowLimit: windowLimit)
        }
    }
}
