// The process's line to org.freedesktop.secrets, straight over GDBus (no libsecret proxies):
// one private session-bus connection, one "plain" Secret Service session and the path of the
// "default" collection, each made once and reused by every store operation of the process.
//
// Why plain: Keygate's blobs are sealed (XChaCha20-Poly1305 or sealed boxes) before they
// reach the Secret Service, so libsecret's Diffie-Hellman transport session (57% of a CLI
// read's instructions) would only encrypt ciphertext again. Method calls are sent
// asynchronously and their replies collected on a private GMainContext, so several calls
// (an item's properties and its secret; one GetAll per listed item) share one wait; each
// call has its own reply timeout (ServiceDeadline). A connection that closed, or a session
// the daemon forgot (it restarted), is dropped and made again by the next call. Who provides
// the service (SecretServiceProvider) is asked once per connection, when a message needs it;
// prompts are completed by SecretServicePrompt.
internal import CGio
import Synchronization

/// One D-Bus method call to the Secret Service.
struct ServiceMethodCall {
    /// The bus name called: the Secret Service, or the bus daemon itself (org.freedesktop.DBus).
    var destination: String = SecretServiceConnection.busName
    var path: String
    var interface: String
    var method: String
    /// A floating tuple (Variant.tuple), consumed by the call; nil for no arguments.
    var arguments: OpaquePointer?
    /// The reply's type, checked by GDBus, e.g. "(aoao)".
    var replyType: String
    /// Said in the error when the call fails: "search for items".
    var action: String
}

final class SecretServiceConnection: @unchecked Sendable {
    // @unchecked: the GDBusConnection is thread-safe; `state` is only touched under its Mutex.
    static let busName = "org.freedesktop.secrets"
    static let servicePath = "/org/freedesktop/secrets"
    static let serviceInterface = "org.freedesktop.Secret.Service"
    static let itemInterface = "org.freedesktop.Secret.Item"
    static let collectionInterface = "org.freedesktop.Secret.Collection"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let promptInterface = "org.freedesktop.Secret.Prompt"

    /// How many calls of one batch may wait for their replies at once.
    static let window = 32

    /// The process-wide connection.
    static let shared = SecretServiceConnection()

    private struct State {
        var connection: BusConnection?
        var session: String?
        var collection: String?
        var provider: SecretServiceProvider?
    }

    private let state = Mutex(State())

    /// The bus to use: nil for the session bus (DBUS_SESSION_BUS_ADDRESS), or a D-Bus address
    /// (tests reach a private bus with one provider on it this way).
    let address: String?

    /// A connection to `address` (nil: the session bus). Keygate itself uses `shared`.
    init(address: String? = nil) { self.address = address }

    /// Owns the GDBusConnection.
    final class BusConnection: @unchecked Sendable {
        // @unchecked: GDBusConnection is thread-safe; the pointer never changes.
        let pointer: OpaquePointer
        init(taking pointer: OpaquePointer) { self.pointer = pointer }
        var isClosed: Bool { g_dbus_connection_is_closed(pointer) != 0 }
        deinit {
            g_dbus_connection_close_sync(pointer, nil, nil)
            g_object_unref(UnsafeMutableRawPointer(pointer))
        }
    }

    // MARK: the connection, the session, the collection

    /// The open connection, made on first use (under the deadline).
    func connection(_ deadline: ServiceDeadline) throws -> BusConnection {
        try state.withLock { state in
            if let open = state.connection, !open.isClosed { return open }
            state = State()
            let made = try Self.connect(deadline, address: address)
            state.connection = made
            return made
        }
    }

    private static func connect(_ deadline: ServiceDeadline, address fixed: String?) throws -> BusConnection {
        if let why = kg_gio_load_error() {
            throw KeychainError.notAvailable(String(cString: why) + ": Keygate reaches the Secret Service through "
                                             + "GLib's GIO; install it (Debian: `sudo apt-get install libglib2.0-0`), "
                                             + "or use the embedded store (KEYGATE_STORE=embedded)")
        }
        return try deadline.withCancellable { cancellable in
            var error: UnsafeMutablePointer<GError>?
            let found = fixed == nil ? g_dbus_address_get_for_bus_sync(G_BUS_TYPE_SESSION, cancellable, &error) : nil
            defer { g_free(found) }
            guard let address = fixed ?? found.map({ String(cString: $0) }) else {
                throw SecretServiceFailure.map(GErrorInfo.take(error), action: "connect to the session bus", deadline: deadline)
            }
            let flags = GDBusConnectionFlags(rawValue: G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT.rawValue
                                             | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION.rawValue)
            guard let connection = g_dbus_connection_new_for_address_sync(address, flags, nil, cancellable, &error) else {
                throw SecretServiceFailure.map(GErrorInfo.take(error), action: "connect to the session bus", deadline: deadline)
            }
            // A private connection never raises SIGTERM when the bus goes away (exit-on-close is
            // false): a library inside sshd or a PAM stack fails its call instead.
            g_dbus_connection_set_exit_on_close(connection, 0)
            return BusConnection(taking: connection)
        }
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

    /// The cached session and collection paths (nil: not known yet on the open connection).
    func cached(_ deadline: ServiceDeadline) throws -> (session: String?, collection: String?) {
        let bus = try connection(deadline)
        return state.withLock { $0.connection === bus ? ($0.session, $0.collection) : (nil, nil) }
    }

    /// Records an OpenSession reply; returns the session path.
    @discardableResult
    func remember(session reply: GVariantRef) throws -> String {
        guard let path = reply.child(1)?.string, path != "/", !path.isEmpty else {
            throw KeychainError.notAvailable("the Secret Service refused a plain session: check that "
                                             + "\(provider(.init(.seconds(1))).daemonName) is healthy, then try again")
        }
        state.withLock { $0.session = path }
        return path
    }

    /// Records a ReadAlias reply; returns the collection path.
    @discardableResult
    func remember(collection reply: GVariantRef) throws -> String {
        guard let path = reply.child(0)?.string, path != "/", !path.isEmpty else {
            throw SecretServiceFailure.noDefaultCollection(provider(.init(.seconds(1))))
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

    /// Forgets the session (the daemon no longer knows it) or the collection path (it went away).
    func forgetSession() { state.withLock { $0.session = nil } }
    func forgetCollection() { state.withLock { $0.collection = nil } }

    // MARK: the provider

    /// Who owns org.freedesktop.secrets, asked of the bus daemon once per connection; `.unknown`
    /// when nobody does or the bus cannot tell (never an error: it only words messages).
    func provider(_ deadline: ServiceDeadline) -> SecretServiceProvider {
        guard let bus = try? connection(deadline) else { return .unknown }
        if let known = state.withLock({ $0.connection === bus ? $0.provider : nil }) { return known }
        let ask = ServiceMethodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                    interface: "org.freedesktop.DBus", method: "GetConnectionUnixProcessID",
                                    arguments: Variant.tuple([Variant.string(Self.busName)]), replyType: "(u)",
                                    action: "find the Secret Service's process")
        guard let reply = try? exchange([ask], deadline, on: bus).first, case .success(let value) = reply,
              let pid = value.child(0)?.uint32 else { return .unknown }
        let found = SecretServiceProvider(pid: pid)
        state.withLock { if $0.connection === bus { $0.provider = found } }
        return found
    }

    // MARK: calls

    /// One call; its reply, or the error it met.
    func call(_ method: ServiceMethodCall, _ deadline: ServiceDeadline) throws -> GVariantRef {
        guard let result = try calls([method], deadline).first else {
            throw KeychainError.notAvailable("the Secret Service could not \(method.action): try again")
        }
        return try result.get()
    }

    /// Sends every call at once, then waits for all the replies (each under its own timeout).
    func calls(_ methods: [ServiceMethodCall], _ deadline: ServiceDeadline) throws -> [Result<GVariantRef, KeychainError>] {
        guard !methods.isEmpty else { return [] }
        let bus: BusConnection
        do {
            bus = try connection(deadline)
        } catch {
            for method in methods { if let arguments = method.arguments { g_variant_unref(g_variant_ref_sink(arguments)) } }
            throw error
        }
        let results = try exchange(methods, deadline, on: bus)
        let failed = results.contains { if case .failure = $0 { return true } else { return false } }
        let provider = failed ? self.provider(deadline) : .unknown
        return zip(methods, results).map { method, result in
            result.mapError { SecretServiceFailure.map($0.info, action: method.action, deadline: deadline, provider: provider) }
        }
    }

    /// A failed call's GError (nil: none given), before it is worded.
    struct CallFailure: Error {
        let info: GErrorInfo?
    }

    /// Sends every call at once on `bus`, then waits for all the replies (each under its own timeout).
    func exchange(_ methods: [ServiceMethodCall], _ deadline: ServiceDeadline, on bus: BusConnection) throws
        -> [Result<GVariantRef, CallFailure>] {
        let batch = ReplyBatch(count: methods.count)
        guard let context = g_main_context_new() else {
            throw KeychainError.notAvailable("could not allocate memory for a Secret Service call: free some memory, then try again")
        }
        g_main_context_push_thread_default(context)
        // At most `window` calls wait at once, so each call's timeout counts its own wait and a
        // short queue, never the whole run (10,000 GetAll calls of a big list).
        var sent = 0
        while batch.pending > 0 {
            while sent < methods.count, sent - (methods.count - batch.pending) < Self.window {
                let method = methods[sent]
                let slot = Unmanaged.passRetained(ReplySlot(batch: batch, index: sent)).toOpaque()
                let type = g_variant_type_new(method.replyType)
                g_dbus_connection_call(bus.pointer, method.destination, method.path, method.interface, method.method,
                                       method.arguments, type, G_DBUS_CALL_FLAGS_NONE, deadline.milliseconds, nil,
                                       replyArrived, slot)
                g_variant_type_free(type)
                sent += 1
            }
            g_main_context_iteration(context, 1)
        }
        g_main_context_pop_thread_default(context)
        g_main_context_unref(context)
        return methods.indices.map { index in
            if let reply = batch.replies[index] { return .success(reply) }
            return .failure(CallFailure(info: batch.errors[index]))
        }
    }

    /// The replies of one batch, filled in by `replyArrived` on this thread's main context.
    final class ReplyBatch {
        var pending: Int
        var replies: [GVariantRef?]
        var errors: [GErrorInfo?]
        init(count: Int) {
            pending = count
            replies = Array(repeating: nil, count: count)
            errors = Array(repeating: nil, count: count)
        }
    }

    final class ReplySlot {
        let batch: ReplyBatch
        let index: Int
        init(batch: ReplyBatch, index: Int) {
            self.batch = batch
            self.index = index
        }
    }
}

/// GAsyncReadyCallback of every call: takes the reply (or the error) into its slot.
let replyArrived: GAsyncReadyCallback = { source, result, userData in
    guard let userData else { return }
    let slot = Unmanaged<SecretServiceConnection.ReplySlot>.fromOpaque(userData).takeRetainedValue()
    var error: UnsafeMutablePointer<GError>?
    let reply = g_dbus_connection_call_finish(source, result, &error)
    if let reply {
        slot.batch.replies[slot.index] = GVariantRef(taking: reply)
    } else {
        slot.batch.errors[slot.index] = GErrorInfo.take(error)
    }
    slot.batch.pending -= 1
}
