// One method call at a time on the system bus, over sd-bus (Sources/CSDBus, loaded on first
// use), each under a deadline: what root and its clients ask fprintd (FprintdProbe). A narrow
// client of its own, so that the setuid gatekeeper links neither the Secret Service client nor
// SQLite (KeygateStorage), whose session-bus connection this is not: it reads only the reply
// types fprintd sends (an array of object paths or of strings, a string in a variant).
import KeygateCore
internal import CSDBus
internal import Glibc

/// The deadline of one exchange with the system bus: connecting (authentication and Hello) and
/// each call. A hung service fails the call within it, never sd-bus's 25-second default.
package struct BusDeadline: Sendable {
    let limit: Duration

    package init(_ limit: Duration) { self.limit = limit }

    /// The limit in microseconds, as sd-bus takes it (at least 1: 0 would mean sd-bus's default).
    var microseconds: UInt64 {
        let (seconds, attoseconds) = limit.components
        return UInt64(max(1, max(0, seconds) * 1_000_000 + max(0, attoseconds) / 1_000_000_000_000))
    }

    /// The limit as people read it: "5 s", "1.5 s".
    var limitText: String {
        let (seconds, attoseconds) = limit.components
        let tenths = attoseconds / 100_000_000_000_000_000
        return tenths == 0 ? "\(seconds) s" : "\(seconds).\(tenths) s"
    }
}

/// A call that failed: the D-Bus error the other end (or sd-bus) sent, or a local errno.
struct SystemBusFailure: Error {
    /// e.g. "net.reactivated.Fprint.Error.NoEnrolledPrints"; nil for a local failure.
    var name: String?
    var message: String
    /// The errno sd-bus maps the error to (positive), or the local failure's.
    var errno: Int32

    static func local(_ result: Int32) -> SystemBusFailure {
        let code = result < 0 ? -result : result
        return SystemBusFailure(name: nil, message: String(cString: strerror(code)), errno: code)
    }

    static let timedOut = SystemBusFailure(name: nil, message: "Method call timed out", errno: ETIMEDOUT)
}

/// One private connection to a bus, closed when released.
final class SystemBusConnection {
    private let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { _ = sd_bus_flush_close_unref(pointer) }

    /// Connects to `address` as a bus client, under `deadline`.
    static func open(address: String, deadline: BusDeadline) -> Result<SystemBusConnection, SystemBusFailure> {
        if let why = kg_sdbus_load_error() {
            return .failure(SystemBusFailure(name: nil, message: String(cString: why), errno: ENOENT))
        }
        var made: OpaquePointer?
        var r = sd_bus_new(&made)
        guard r >= 0, let bus = made else { return .failure(.local(r)) }
        let connection = SystemBusConnection(bus)
        r = sd_bus_set_address(bus, address)
        if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
        if r >= 0 { r = sd_bus_negotiate_fds(bus, 0) }
        if r >= 0 { r = sd_bus_set_method_call_timeout(bus, deadline.microseconds) }
        if r >= 0 { r = sd_bus_start(bus) }
        return r >= 0 ? .success(connection) : .failure(.local(r))
    }

    /// What a reply carries, as the call expects it.
    enum Reply {
        /// "ao" or "as": every element, as text.
        case array(Character)
        /// "v" holding an "s".
        case stringInVariant
    }

    /// One call with string arguments; the reply's strings, or the failure.
    func call(destination: String, path: String, interface: String, method: String, arguments: [String], reply: Reply,
              deadline: BusDeadline) -> Result<[String], SystemBusFailure> {
        var made: OpaquePointer?
        var r = sd_bus_message_new_method_call(pointer, &made, destination, path, interface, method)
        guard r >= 0, let message = made else { return .failure(.local(r < 0 ? r : -ENOMEM)) }
        defer { _ = sd_bus_message_unref(message) }
        for argument in arguments {
            r = argument.withCString { sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_STRING), $0) }
            if r < 0 { return .failure(.local(r)) }
        }
        let pending = PendingReply(reply)
        var slot: OpaquePointer?
        r = sd_bus_call_async(pointer, &slot, message, systemBusReplied, Unmanaged.passUnretained(pending).toOpaque(),
                              deadline.microseconds)
        guard r >= 0 else { return .failure(.local(r)) }
        // Released before `pending` goes: a reply that comes later is dropped by sd-bus, never delivered to freed memory.
        defer { if let slot { _ = sd_bus_slot_unref(slot) } }
        let expires = MonotonicClock.nanoseconds + deadline.microseconds * 1_000
        while pending.outcome == nil {
            let processed = sd_bus_process(pointer, nil)
            if processed < 0 { return .failure(.local(processed)) }
            if processed > 0 { continue }
            let now = MonotonicClock.nanoseconds
            guard now < expires else { return .failure(.timedOut) }
            let waited = sd_bus_wait(pointer, max(1, (expires - now) / 1_000))
            if waited < 0, waited != -EINTR { return .failure(.local(waited)) }
        }
        return pending.outcome ?? .failure(.timedOut)
    }

    /// Where the reply handler leaves its answer.
    final class PendingReply {
        let expected: Reply
        var outcome: Result<[String], SystemBusFailure>?
        init(_ expected: Reply) { self.expected = expected }

        /// Reads `message`, a reply or an error, into `outcome`.
        func take(_ message: OpaquePointer) {
            if sd_bus_message_is_method_error(message, nil) > 0 {
                let error = sd_bus_message_get_error(message)
                outcome = .failure(SystemBusFailure(name: error?.pointee.name.map { String(cString: $0) },
                                                    message: error?.pointee.message.map { String(cString: $0) } ?? "",
                                                    errno: sd_bus_message_get_errno(message)))
                return
            }
            let signature = sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? ""
            let (container, contents, element): (Int32, String, Int32)
            switch expected {
            case .array(let kind):
                (container, contents, element) = (SD_BUS_TYPE_ARRAY, String(kind), kind == "o" ? SD_BUS_TYPE_OBJECT_PATH : SD_BUS_TYPE_STRING)
            case .stringInVariant:
                (container, contents, element) = (SD_BUS_TYPE_VARIANT, "s", SD_BUS_TYPE_STRING)
            }
            let wanted = container == SD_BUS_TYPE_ARRAY ? "a" + contents : "v"
            guard signature == wanted, sd_bus_message_enter_container(message, CChar(container), contents) > 0 else {
                outcome = .failure(SystemBusFailure(name: nil, message: "the reply's type was (\(signature)), not (\(wanted))", errno: EBADMSG))
                return
            }
            var strings: [String] = []
            while true {
                var text: UnsafePointer<CChar>?
                let read = sd_bus_message_read_basic(message, CChar(element), &text)
                if read == 0 { break }
                guard read > 0, let text else {
                    outcome = .failure(SystemBusFailure(name: nil, message: "a malformed reply", errno: EBADMSG))
                    return
                }
                strings.append(String(cString: text))
            }
            _ = sd_bus_message_exit_container(message)
            outcome = .success(strings)
        }
    }
}

/// sd_bus_message_handler_t of every call: takes the reply (or the error) into its PendingReply.
let systemBusReplied: sd_bus_message_handler_t = { message, userData, _ in
    guard let message, let userData else { return 0 }
    Unmanaged<SystemBusConnection.PendingReply>.fromOpaque(userData).takeUnretainedValue().take(message)
    return 0
}
