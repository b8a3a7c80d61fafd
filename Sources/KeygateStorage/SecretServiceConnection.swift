// The process's line to org.freedesktop.secrets, over sd-bus (libsystemd; no libsecret, no
// GLib): one private session-bus connection, one "plain" Secret Service session and the path
// of the "default" collection, each made once and reused by every store operation of the
// process.
//
// Why plain: Keygate's blobs are sealed (XChaCha20-Poly1305 or sealed boxes) before they
// reach the Secret Service, so libsecret's Diffie-Hellman transport session (57% of a CLI
// read's instructions) would only encrypt ciphertext again. Why sd-bus: a read is a handful of
// calls, and sd-bus makes them on the calling thread with no type system, no worker thread
// and no main loop (docs/DECISIONS.md). Method calls are sent at once and their replies
// collected by one loop (sd_bus_process, sd_bus_wait), so several calls (an item's properties
// and its secret; the property reads of every listed item) share one wait; each call has its
// own reply timeout (ServiceDeadline). sd-bus is not thread-safe: every use of a connection
// holds its lock. A connection that closed, or a session the daemon forgot (it restarted), is
// dropped and made again by the next call. Who provides the service (SecretServiceProvider) is
// asked once per connection, when a message needs it; prompts are completed by
// SecretServicePrompt.
import KeygateCore
internal import CSDBus
internal import Glibc
import Synchronization

/// A call's answer: its reply, or the error it met, worded (concrete, not `Result`: a generic
/// instantiation would cost a runtime conformance lookup on every read).
enum ServiceReply {
    case success(BusValue)
    case failure(KeychainError)

    func get() throws -> BusValue {
        switch self {
        case .success(let value): return value
        case .failure(let error): throw error
        }
    }
}

/// A call's answer before it is worded.
enum BusReply {
    case success(BusValue)
    case failure(BusErrorInfo)
}

/// One D-Bus method call to the Secret Service.
struct ServiceMethodCall {
    /// The bus name called: the Secret Service, or the bus daemon itself (org.freedesktop.DBus).
    var destination: String = SecretServiceConnection.busName
    var path: String
    var interface: String
    var method: String
    /// The arguments, as a tuple (Variant.tuple); nil for none.
    var arguments: BusValue?
    /// The reply's type, checked when it arrives, e.g. "(aoao)".
    var replyType: String
    /// Said in the error when the call fails: "search for items".
    var action: String
}

package final class SecretServiceConnection: @unchecked Sendable {
    // @unchecked: `state` is only touched under its Mutex, each sd-bus connection under its own.
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let promptInterface = "org.freedesktop.Secret.Prompt"

    /// How many calls of one batch may wait for their replies at once.
    static let window = 32

    /// The process-wide connection. Its environment is the one the last store was made with
    /// (SecretServiceStore's init: the edge's, passed down), empty before any.
    package static let shared = SecretServiceConnection(environment: KeygateEnvironment([:]))

    private struct State {
        var connection: BusConnection?
        var session: String?
        var collection: String?
        var provider: SecretServiceProvider?
        /// What the last reads' searches found on this connection, newest last (`lastFound`).
        var found: [FoundBefore] = []
    }

    /// The items one search for a read found (paths in the default collection), by its attributes.
    private struct FoundBefore {
        let attributes: [String: String]
        let paths: [String]
    }

    /// How many searches `lastFound` remembers: a process that reads a few items in turn finds
    /// each one's; the oldest is forgotten first.
    static let searchesRemembered = 16

    private let state = Mutex(State())

    /// How many times calls on this connection waited for their replies (`exchange`): a read of an
    /// item read before waits once (ServiceCalls.items), which the tests count.
    package let waits = Atomic<Int>(0)

    /// The bus to use: nil for the session bus (DBUS_SESSION_BUS_ADDRESS), or a D-Bus address
    /// (tests reach a private bus with one provider on it this way).
    let address: String?

    /// The environment the edge passed down (KeygateEnvironment): the session bus's address,
    /// whether a window can be shown, kwalletrc's folder and the test hooks.
    private let given: Mutex<KeygateEnvironment>

    /// A connection to `address` (nil: the session bus `environment` names). Keygate itself uses `shared`.
    package init(address: String? = nil, environment: KeygateEnvironment) {
        self.address = address
        given = Mutex(environment)
    }

    /// The environment this connection reads its variables from.
    package var environment: KeygateEnvironment { given.withLock { $0 } }

    /// Takes the environment a caller's edge built (a store made for one operation), for what
    /// this connection does from now on: a connection not yet made finds its bus in it.
    package func use(_ environment: KeygateEnvironment) {
        given.withLock { $0 = environment }
    }

    /// Owns the sd-bus connection. sd-bus is not thread-safe: every use holds `lock`.
    final class BusConnection: @unchecked Sendable {
        // @unchecked: the pointer never changes, and sd-bus is only used under `lock`.
        let pointer: OpaquePointer
        let lock = Mutex(())
        init(taking pointer: OpaquePointer) { self.pointer = pointer }
        var isClosed: Bool { lock.withLock { _ in sd_bus_is_open(pointer) <= 0 } }
        deinit { _ = sd_bus_flush_close_unref(pointer) }
    }

    // MARK: the connection, the session, the collection

    /// The open connection, made on first use (under the deadline).
    func connection(_ deadline: ServiceDeadline) throws -> BusConnection {
        try state.withLock { state in
            if let open = state.connection, !open.isClosed { return open }
            state = State()
            let made = try Self.connect(deadline, address: address, environment: environment)
            state.connection = made
            return made
        }
    }

    /// The session bus's address: DBUS_SESSION_BUS_ADDRESS, else $XDG_RUNTIME_DIR/bus when it
    /// exists (as sd-bus and GLib find it); nil when there is none.
    static func sessionBusAddress(_ environment: KeygateEnvironment) -> String? {
        if let value = environment.sessionBusAddress { return value }
        guard let runtime = environment.runtimeDirectory else { return nil }
        let path = runtime + "/bus"
        return access(path, F_OK) == 0 ? "unix:path=" + path : nil
    }

    private static func connect(_ deadline: ServiceDeadline, address fixed: String?,
                                environment: KeygateEnvironment) throws -> BusConnection {
        let sessionBus = environment.sessionBusAddress != nil
        if let why = kg_sdbus_load_error() {
            throw KeychainError.notAvailable(String(cString: why) + ": Keygate reaches the Secret Service through "
                                             + "sd-bus (libsystemd); install it (Debian: `sudo apt-get install libsystemd0`), "
                                             + "or use the embedded store (KEYGATE_STORE=embedded)")
        }
        guard let address = fixed ?? sessionBusAddress(environment) else {
            throw SecretServiceFailure.map(.local(-ENOENT), action: "connect to the session bus", deadline: deadline,
                                           sessionBus: sessionBus)
        }
        var made: OpaquePointer?
        var r = sd_bus_new(&made)
        guard r >= 0, let bus = made else {
            throw SecretServiceFailure.map(.local(r), action: "connect to the session bus", deadline: deadline,
                                           sessionBus: sessionBus)
        }
        // Owned from here: released (closed) on every way out but success.
        let owner = BusConnection(taking: bus)
        r = sd_bus_set_address(bus, address)
        // A client of the bus daemon (Hello, a unique name); no fd passing (the Secret Service
        // sends none); the deadline bounds authentication as well as every call.
        if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
        if r >= 0 { r = sd_bus_negotiate_fds(bus, 0) }
        if r >= 0 { r = sd_bus_set_method_call_timeout(bus, deadline.microseconds) }
        if r >= 0 { r = sd_bus_start(bus) }
        guard r >= 0 else {
            throw SecretServiceFailure.map(.local(r), action: "connect to the session bus", deadline: deadline,
                                           sessionBus: sessionBus)
        }
        // A private connection never raises SIGTERM when the bus goes away (sd-bus's
        // exit-on-disconnect is off unless asked for): a library inside sshd or a PAM stack
        // fails its call instead.
        return owner
    }

    /// The OpenSession call of a plain session.
    static var openSession: ServiceMethodCall {
        ServiceMethodCall(path: servicePath, interface: serviceInterface, method: "OpenSession",
                          arguments: Variant.tuple([Variant.string("plain"), Variant.boxed(Variant.string(""))]),
                          replyType: "(vo)", action: "open a session")
    }

    /// The ReadAlias call that finds the default collection.
    static var readDefaultAlias: ServiceMethodCall {
        ServiceMethodCall(path: servicePath, interface: serviceInterface, method: "ReadAlias",
                          arguments: Variant.tuple([Variant.string("default")]), replyType: "(o)",
                          action: "find the default collection")
    }

    /// The open connection, and its cached session and collection paths (nil: not known yet on it).
    func cached(_ deadline: ServiceDeadline) throws -> (bus: BusConnection, session: String?, collection: String?) {
        let bus = try connection(deadline)
        return state.withLock { $0.connection === bus ? (bus, $0.session, $0.collection) : (bus, nil, nil) }
    }

    /// Records an OpenSession reply; returns the session path.
    @discardableResult
    func remember(session reply: BusValue) throws -> String {
        guard let path = reply.child(1)?.string, path != "/", !path.isEmpty else {
            throw KeychainError.notAvailable("the Secret Service refused a plain session: check that "
                                             + "\(provider(.init(.seconds(1))).daemonName) is healthy, then try again")
        }
        state.withLock { $0.session = path }
        return path
    }

    /// Records a ReadAlias reply; returns the collection path.
    @discardableResult
    func remember(collection reply: BusValue) throws -> String {
        guard let path = reply.child(0)?.string, path != "/", !path.isEmpty else {
            let provider = self.provider(.init(.seconds(1)))
            let wallet = provider == .kWallet ? kWalletLoginWallet(.init(.seconds(1))) : nil
            throw SecretServiceFailure.noDefaultCollection(provider, loginWallet: wallet)
        }
        state.withLock { $0.collection = path }
        return path
    }

    /// The path of the plain session, opened on first use.
    func session(_ deadline: ServiceDeadline) throws -> String {
        if let session = try cached(deadline).session { return session }
        return try remember(session: try call(Self.openSession, deadline))
    }

    /// The path of the collection behind the "default" alias, resolved on first use.
    func defaultCollection(_ deadline: ServiceDeadline) throws -> String {
        if let collection = try cached(deadline).collection { return collection }
        return try remember(collection: try call(Self.readDefaultAlias, deadline))
    }

    /// Forgets the session (the daemon no longer knows it) or the collection path (it went away,
    /// and with it the paths its searches found).
    func forgetSession() { state.withLock { $0.session = nil } }
    func forgetCollection() { state.withLock { $0.collection = nil; $0.found = [] } }

    // MARK: what a read's search found before

    /// The paths the last read's search with exactly `attributes` found on this connection, or nil.
    /// Only a guess (ServiceCalls.items: a read sends the items' reads with the search): the
    /// search's own answer decides what the read returns.
    func lastFound(_ attributes: [String: String]) -> [String]? {
        state.withLock { state in state.found.last { $0.attributes == attributes }?.paths }
    }

    /// Records what a read's search with `attributes` found on `bus` (nothing, once that
    /// connection is gone: the paths are its daemon's).
    func remember(found paths: [String], for attributes: [String: String], on bus: BusConnection) {
        state.withLock { state in
            guard state.connection === bus else { return }
            state.found.removeAll { $0.attributes == attributes }
            if state.found.count >= Self.searchesRemembered { state.found.removeFirst() }
            state.found.append(FoundBefore(attributes: attributes, paths: paths))
        }
    }
    /// Forgets the connection and all it knew: the next call connects anew, as a new client.
    func forgetConnection() { state.withLock { $0 = State() } }

    // MARK: the provider

    /// Who owns org.freedesktop.secrets, asked of the bus daemon once per connection; `.unknown`
    /// when nobody does or the bus cannot tell (never an error: it only words messages).
    package func provider(_ deadline: ServiceDeadline) -> SecretServiceProvider {
        guard let bus = try? connection(deadline) else { return .unknown }
        if let known = state.withLock({ $0.connection === bus ? $0.provider : nil }) { return known }
        let ask = ServiceMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", method: "GetConnectionUnixProcessID",
                                    arguments: Variant.tuple([Variant.string(Self.busName)]), replyType: "(u)",
                                    action: "find the Secret Service's process")
        guard let reply = exchange([ask], deadline, on: bus).first, case .success(let value) = reply,
              let pid = value.child(0)?.uint32 else { return .unknown }
        let found = SecretServiceProvider(pid: pid)
        state.withLock { if $0.connection === bus { $0.provider = found } }
        return found
    }

    // MARK: calls

    /// One call; its reply, or the error it met.
    func call(_ method: ServiceMethodCall, _ deadline: ServiceDeadline) throws -> BusValue {
        guard let result = try calls([method], deadline).first else {
            throw KeychainError.notAvailable("the Secret Service could not \(method.action): try again")
        }
        return try result.get()
    }

    /// Sends every call at once, then waits for all the replies (each under its own timeout).
    func calls(_ methods: [ServiceMethodCall], _ deadline: ServiceDeadline) throws -> [ServiceReply] {
        guard !methods.isEmpty else { return [] }
        let bus = try connection(deadline)
        let results = exchange(methods, deadline, on: bus)
        var failed = false
        for result in results { if case .failure = result { failed = true } }
        let provider = failed ? self.provider(deadline) : .unknown
        var out: [ServiceReply] = []
        out.reserveCapacity(results.count)
        for index in results.indices {
            switch results[index] {
            case .success(let value): out.append(.success(value))
            case .failure(let failure):
                out.append(.failure(SecretServiceFailure.map(failure, action: methods[index].action, deadline: deadline,
                                                             provider: provider, sessionBus: environment.sessionBusAddress != nil)))
            }
        }
        return out
    }

    /// Sends every call at once on `bus`, then waits for all the replies (each under its own
    /// timeout). At most `window` calls wait at once, so each call's timeout counts its own
    /// wait and a short queue, never the whole run (10,000 GetAll calls of a big list).
    func exchange(_ methods: [ServiceMethodCall], _ deadline: ServiceDeadline, on bus: BusConnection)
        -> [BusReply] {
        let batch = ReplyBatch(methods.map { $0.replyType })
        let clock = ContinuousClock()
        waits.wrappingAdd(1, ordering: .relaxed)
        bus.lock.withLock { _ in
            var slots: [ReplySlot] = []
            slots.reserveCapacity(methods.count)
            defer { for slot in slots { slot.release() } }
            // Every call's deadline is kept here as well as given to sd-bus: the wait below
            // never outlasts the oldest call still waiting, whatever sd-bus's own timers do.
            var oldest = 0
            var sent = 0
            while batch.pending > 0 {
                while sent < methods.count, sent - (methods.count - batch.pending) < Self.window {
                    let slot = ReplySlot(batch: batch, index: sent, expires: clock.now.advanced(by: deadline.limit))
                    let r = Self.send(methods[sent], on: bus.pointer, deadline, slot)
                    if r < 0 { batch.fail(sent, .local(r)) }
                    slots.append(slot)
                    sent += 1
                }
                let now = clock.now
                while oldest < slots.count, !batch.isWaiting(oldest) || slots[oldest].expires <= now {
                    if batch.isWaiting(oldest) {
                        batch.fail(oldest, .timedOut)
                        slots[oldest].release()
                    }
                    oldest += 1
                }
                if batch.pending == 0 { break }
                let processed = sd_bus_process(bus.pointer, nil)
                if processed < 0 {
                    batch.failAll(.local(processed))
                    break
                }
                if processed > 0 { continue }
                let left = oldest < slots.count ? ServiceDeadline(now.duration(to: slots[oldest].expires)).microseconds : 1
                let waited = sd_bus_wait(bus.pointer, left)
                if waited < 0, waited != -EINTR {
                    batch.failAll(.local(waited))
                    break
                }
            }
        }
        var out: [BusReply] = []
        out.reserveCapacity(methods.count)
        for index in methods.indices {
            if let reply = batch.replies[index] {
                out.append(.success(reply))
            } else {
                out.append(.failure(batch.errors[index] ?? .local(-EIO)))
            }
        }
        return out
    }

    /// Sends `method` with `slot` to take its reply; sd-bus's negative errno when it could not.
    private static func send(_ method: ServiceMethodCall, on bus: OpaquePointer, _ deadline: ServiceDeadline,
                             _ slot: ReplySlot) -> Int32 {
        var made: OpaquePointer?
        var r = sd_bus_message_new_method_call(bus, &made, method.destination, method.path, method.interface, method.method)
        guard r >= 0, let message = made else { return r < 0 ? r : -ENOMEM }
        defer { _ = sd_bus_message_unref(message) }
        if let arguments = method.arguments {
            r = BusMessage.append(arguments: arguments, to: message)
            if r < 0 { return r }
        }
        var handle: OpaquePointer?
        r = sd_bus_call_async(bus, &handle, message, replyArrived, Unmanaged.passUnretained(slot).toOpaque(),
                              deadline.microseconds)
        slot.handle = handle
        return r
    }

    /// The replies of one batch, filled in by `replyArrived` while `exchange` processes the bus.
    final class ReplyBatch {
        let replyTypes: [String]
        var pending: Int
        var replies: [BusValue?]
        var errors: [BusErrorInfo?]
        init(_ replyTypes: [String]) {
            self.replyTypes = replyTypes
            pending = replyTypes.count
            replies = Array(repeating: nil, count: replyTypes.count)
            errors = Array(repeating: nil, count: replyTypes.count)
        }

        /// Whether call `index` still waits for its answer.
        func isWaiting(_ index: Int) -> Bool { replies[index] == nil && errors[index] == nil }

        func fail(_ index: Int, _ error: BusErrorInfo) {
            guard replies[index] == nil, errors[index] == nil else { return }
            errors[index] = error
            pending -= 1
        }

        /// The connection failed: every call still waiting fails with `error`.
        func failAll(_ error: BusErrorInfo) {
            for index in replies.indices { fail(index, error) }
        }

        /// Takes `message` (a reply or an error) as call `index`'s answer.
        func take(_ message: OpaquePointer, at index: Int) {
            guard replies[index] == nil, errors[index] == nil else { return }
            if sd_bus_message_is_method_error(message, nil) > 0 {
                fail(index, BusErrorInfo.of(message))
                return
            }
            let signature = sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
            guard "(" + signature + ")" == replyTypes[index] else {
                fail(index, BusErrorInfo(name: nil, message: "the reply's type was (\(signature)), not \(replyTypes[index])",
                                         errno: EBADMSG))
                return
            }
            guard let arguments = BusMessage.arguments(of: message, mappingStrings: true) else {
                fail(index, BusErrorInfo(name: nil, message: "a malformed reply", errno: EBADMSG))
                return
            }
            replies[index] = arguments
            pending -= 1
        }
    }

    /// One call's place in its batch, and sd-bus's handle of the call (released when the batch
    /// ends: a reply that comes later is dropped by sd-bus, never delivered to a freed slot).
    final class ReplySlot {
        let batch: ReplyBatch
        let index: Int
        /// When the call's deadline passes.
        let expires: ContinuousClock.Instant
        var handle: OpaquePointer?
        init(batch: ReplyBatch, index: Int, expires: ContinuousClock.Instant) {
            self.batch = batch
            self.index = index
            self.expires = expires
        }

        func release() {
            if let handle { _ = sd_bus_slot_unref(handle) }
            handle = nil
        }
    }
}

/// sd_bus_message_handler_t of every call: takes the reply (or the error) into its slot.
let replyArrived: sd_bus_message_handler_t = { message, userData, _ in
    guard let message, let userData else { return 0 }
    let slot = Unmanaged<SecretServiceConnection.ReplySlot>.fromOpaque(userData).takeUnretainedValue()
    slot.batch.take(message, at: slot.index)
    return 0
}
