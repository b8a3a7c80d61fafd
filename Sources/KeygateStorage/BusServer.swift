// The server side of sd-bus, for keygate-secret-service: one connection to the session bus,
// a well-known name, one callback for every object path (sd-bus's vtables are C macros, so a
// single fallback that hands each method call over as plain values is simplest from Swift), the
// replies, errors and signals the daemon sends, and signal matches (NameOwnerChanged). Single-
// threaded, as sd-bus is: the daemon's loop calls `process` and `wait` and nothing else touches
// the connection. Arguments are read and written by BusMessage as BusValue trees, or value by value
// by BusCallReader and BusReplyWriter for the calls answered most often; what they mean is the daemon's.
import KeygateCore
internal import CSDBus

/// One incoming method call, valid only while the handler runs (the daemon answers at once).
package struct BusCall {
    /// The caller's unique name (":1.42"); "" when the bus gave none (a peer-to-peer call).
    package let sender: String
    package let path: String
    package let interface: String
    package let member: String
    /// The arguments' signature ("" for none).
    package let signature: String
    fileprivate let message: OpaquePointer

    /// The arguments as a tuple, read from the start of the message; nil when it could not be read.
    package var arguments: BusValue? {
        guard sd_bus_message_rewind(message, 1) >= 0 else { return nil }
        return BusMessage.arguments(of: message)
    }

    /// A reader at the start of the arguments, for a call read value by value.
    package var reader: BusCallReader? {
        guard sd_bus_message_rewind(message, 1) >= 0 else { return nil }
        return BusCallReader(message: message)
    }
}

/// Why the bus could not be used, worded for the daemon's log and exit.
package struct BusServerError: Error, CustomStringConvertible {
    package let description: String
    /// The negative errno sd-bus returned (EEXIST: the name has an owner).
    package let code: Int32
    package var nameIsTaken: Bool { code == -SystemErrno.exists.code }
}

package final class BusServer {
    private let bus: OpaquePointer
    private var slots: [OpaquePointer] = []
    /// Kept alive for the C callbacks' userdata.
    private var boxes: [AnyObject] = []

    private final class CallBox {
        let handler: (BusCall) -> Bool
        init(_ handler: @escaping (BusCall) -> Bool) { self.handler = handler }
    }

    private final class SignalBox {
        let handler: (BusValue) -> Void
        init(_ handler: @escaping (BusValue) -> Void) { self.handler = handler }
    }

    /// A connection to the bus at `address` (a D-Bus address: "unix:path=/run/user/1000/bus").
    package init(address: String) throws(BusServerError) {
        if let why = kg_sdbus_load_error() ?? kg_sdbus_server_load_error() {
            throw BusServerError(description: String(cString: why) + ": install libsystemd0", code: -SystemErrno.noEntry.code)
        }
        var made: OpaquePointer?
        var r = sd_bus_new(&made)
        guard r >= 0, let bus = made else { throw Self.error("create a bus connection", r) }
        self.bus = bus
        r = sd_bus_set_address(bus, address)
        if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
        if r >= 0 { r = sd_bus_negotiate_fds(bus, 0) }
        if r >= 0 { r = sd_bus_start(bus) }
        // A throw from here runs deinit (every stored property is set), which closes the bus.
        guard r >= 0 else { throw Self.error("connect to the session bus at \(address)", r) }
    }

    deinit {
        for slot in slots { _ = sd_bus_slot_unref(slot) }
        _ = sd_bus_flush_close_unref(bus)
    }

    /// The session bus's address in `environment`: DBUS_SESSION_BUS_ADDRESS, else
    /// $XDG_RUNTIME_DIR/bus when it exists; nil when there is none.
    package static func sessionBusAddress(_ environment: KeygateEnvironment) -> String? {
        SecretServiceConnection.sessionBusAddress(environment)
    }

    /// This connection's unique name (":1.7").
    package var uniqueName: String {
        var name: UnsafePointer<CChar>?
        guard sd_bus_get_unique_name(bus, &name) >= 0, let name else { return "" }
        return String(cString: name)
    }

    /// Takes `name`. `replace`: from its current owner, where that owner allows it. Whoever owns
    /// it later may take it from this connection in turn (the daemon then leaves).
    package func requestName(_ name: String, replace: Bool) throws(BusServerError) {
        let flags = UInt64(SD_BUS_NAME_ALLOW_REPLACEMENT) | (replace ? UInt64(SD_BUS_NAME_REPLACE_EXISTING) : 0)
        let r = sd_bus_request_name(bus, name, flags)
        guard r >= 0 else { throw Self.error("take the name \(name)", r) }
    }

    /// Calls `handler` for every method call to `prefix` or below; it returns false for a path
    /// it does not serve (sd-bus then answers UnknownObject). The handler must answer (`reply`,
    /// `replyError`) before it returns: the call is gone after.
    package func serve(prefix: String, _ handler: @escaping (BusCall) -> Bool) throws(BusServerError) {
        let box = CallBox(handler)
        var slot: OpaquePointer?
        let r = sd_bus_add_fallback(bus, &slot, prefix, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let box = Unmanaged<CallBox>.fromOpaque(userdata).takeUnretainedValue()
            var type: UInt8 = 0
            guard sd_bus_message_get_type(message, &type) >= 0, Int32(type) == SD_BUS_MESSAGE_METHOD_CALL else { return 0 }
            func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
            let call = BusCall(sender: text(sd_bus_message_get_sender(message)), path: text(sd_bus_message_get_path(message)),
                               interface: text(sd_bus_message_get_interface(message)),
                               member: text(sd_bus_message_get_member(message)),
                               signature: text(sd_bus_message_get_signature(message, 1)), message: message)
            return box.handler(call) ? 1 : 0
        }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0, let slot else { throw Self.error("serve \(prefix)", r) }
        slots.append(slot)
        boxes.append(box)
    }

    /// Calls `handler` with the arguments of every signal that matches.
    package func onSignal(sender: String?, path: String?, interface: String?, member: String?,
                          _ handler: @escaping (BusValue) -> Void) throws(BusServerError) {
        let box = SignalBox(handler)
        var slot: OpaquePointer?
        let r = sd_bus_match_signal(bus, &slot, sender, path, interface, member, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let box = Unmanaged<SignalBox>.fromOpaque(userdata).takeUnretainedValue()
            if let arguments = BusMessage.arguments(of: message) { box.handler(arguments) }
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0, let slot else { throw Self.error("match the signal \(member ?? "")", r) }
        slots.append(slot)
        boxes.append(box)
    }

    /// Answers `call` with `arguments` (a tuple: each child one argument). Returns false when
    /// sd-bus refused the reply (a value it cannot send; the caller then answers with an error).
    @discardableResult
    package func reply(to call: BusCall, _ arguments: BusValue) -> Bool {
        guard sd_bus_message_get_expect_reply(call.message) > 0 else { return true }
        var made: OpaquePointer?
        guard sd_bus_message_new_method_return(call.message, &made) >= 0, let reply = made else { return false }
        defer { _ = sd_bus_message_unref(reply) }
        guard BusMessage.append(arguments: arguments, to: reply) >= 0 else { return false }
        return sd_bus_send(bus, reply, nil) >= 0
    }

    /// Answers `call` with the arguments `write` appends, straight into the reply. Returns false
    /// when `write` or sd-bus failed (the caller then answers with an error).
    @discardableResult
    package func reply(to call: BusCall, writing write: (BusReplyWriter) -> Bool) -> Bool {
        guard sd_bus_message_get_expect_reply(call.message) > 0 else { return true }
        var made: OpaquePointer?
        guard sd_bus_message_new_method_return(call.message, &made) >= 0, let reply = made else { return false }
        defer { _ = sd_bus_message_unref(reply) }
        guard write(BusReplyWriter(message: reply)) else { return false }
        return sd_bus_send(bus, reply, nil) >= 0
    }

    /// Answers `call` with the D-Bus error `name` and its `message`.
    package func replyError(to call: BusCall, name: String, message: String) {
        guard sd_bus_message_get_expect_reply(call.message) > 0 else { return }
        name.withCString { namePointer in
            message.withCString { messagePointer in
                var error = sd_bus_error(name: namePointer, message: messagePointer, _need_free: 0)
                var made: OpaquePointer?
                guard sd_bus_message_new_method_error(call.message, &made, &error) >= 0, let reply = made else { return }
                _ = sd_bus_send(bus, reply, nil)
                _ = sd_bus_message_unref(reply)
            }
        }
    }

    /// Sends the signal `member` of `interface` from `path`.
    package func emit(path: String, interface: String, member: String, _ arguments: BusValue) {
        var made: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &made, path, interface, member) >= 0, let signal = made else { return }
        defer { _ = sd_bus_message_unref(signal) }
        guard BusMessage.append(arguments: arguments, to: signal) >= 0 else { return }
        _ = sd_bus_send(bus, signal, nil)
    }

    /// Calls a method and waits for its answer (at most `timeout`); nil on any failure. For the
    /// bus daemon's own questions (GetConnectionUnixProcessID).
    package func call(destination: String, path: String, interface: String, member: String, _ arguments: BusValue,
                      timeout: Duration) -> BusValue? {
        var made: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &made, destination, path, interface, member) >= 0, let message = made else {
            return nil
        }
        defer { _ = sd_bus_message_unref(message) }
        guard BusMessage.append(arguments: arguments, to: message) >= 0 else { return nil }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        var answer: OpaquePointer?
        let micros = UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000)
        guard sd_bus_call(bus, message, micros, &error, &answer) >= 0, let answer else { return nil }
        defer { _ = sd_bus_message_unref(answer) }
        return BusMessage.arguments(of: answer)
    }

    /// The method call `member` with `arguments`, built on this connection and sealed as if it
    /// had arrived, handed to `body` (valid only while it runs): for checking that a call reads the
    /// same value by value as it does as a tree. Nil when sd-bus refused to build it.
    package func withCall<R>(path: String, interface: String, member: String, _ arguments: BusValue,
                             _ body: (BusCall) -> R) -> R? {
        var made: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &made, nil, path, interface.isEmpty ? nil : interface, member) >= 0,
              let message = made else { return nil }
        defer { _ = sd_bus_message_unref(message) }
        guard BusMessage.append(arguments: arguments, to: message) >= 0, sd_bus_message_seal(message, 1, 0) >= 0 else { return nil }
        func text(_ pointer: UnsafePointer<CChar>?) -> String { pointer.map { String(cString: $0) } ?? "" }
        return body(BusCall(sender: "", path: path, interface: interface, member: member,
                            signature: text(sd_bus_message_get_signature(message, 1)), message: message))
    }

    /// What `write` appends to a message, read back as a tree: for checking that a reply written
    /// value by value carries what its tree would. Nil when sd-bus refused a value.
    package func written(_ write: (BusReplyWriter) -> Bool) -> BusValue? {
        var made: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &made, nil, "/", nil, "Written") >= 0, let message = made else { return nil }
        defer { _ = sd_bus_message_unref(message) }
        guard write(BusReplyWriter(message: message)), sd_bus_message_seal(message, 1, 0) >= 0 else { return nil }
        return BusMessage.arguments(of: message)
    }

    /// The arguments `tree` (a tuple) as `reply(to:_:)` writes them, read back.
    package func written(_ tree: BusValue) -> BusValue? {
        written { BusMessage.append(arguments: tree, to: $0.message) >= 0 }
    }

    /// Handles what has arrived, one message a call: > 0 when one was handled, 0 when none was
    /// waiting, < 0 when the connection failed (the bus went away).
    package func process() -> Int32 {
        sd_bus_process(bus, nil)
    }

    /// Waits until a message arrives or `timeout` passes; < 0 when the connection failed.
    package func wait(_ timeout: Duration) -> Int32 {
        let micros = UInt64(timeout.components.seconds) * 1_000_000 + UInt64(timeout.components.attoseconds / 1_000_000_000_000)
        return sd_bus_wait(bus, micros)
    }

    /// Sends what is queued.
    package func flush() { _ = sd_bus_flush(bus) }

    private static func error(_ action: String, _ r: Int32) -> BusServerError {
        let code = r < 0 ? -r : r
        return BusServerError(description: "could not \(action): \(SystemErrno(code: code).text)", code: -code)
    }
}
