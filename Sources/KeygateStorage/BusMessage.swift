// Reading and writing sd-bus messages (Sources/CSDBus): a reply's arguments into a BusValue
// tree, a call's arguments out of one, and a method error into a BusErrorInfo. Only the types
// the Secret Service API uses are read as values; anything else is read past as `.other`. In a
// reply to the client, an "a{ss}" (an item's attributes, the largest part of a read's replies) is
// read into a dictionary; a call a server receives keeps its entries, so its limits and checks see
// every entry as sent.
import KeygateCore
internal import CSDBus
internal import Glibc

enum BusMessage {
    /// All the arguments of `message`, as a tuple; nil when the message is malformed. With
    /// `mappingStrings`, each "a{ss}" is read as a `.stringMap` (a key sent twice keeps its last value).
    static func arguments(of message: OpaquePointer, mappingStrings: Bool = false) -> BusValue? {
        var out: [BusValue] = []
        while true {
            switch read(message, mappingStrings) {
            case .value(let value): out.append(value)
            case .end: return .tuple(out)
            case .failed: return nil
            }
        }
    }

    private enum Read {
        case value(BusValue)
        case end
        case failed
    }

    /// The next value of the current container.
    private static func read(_ message: OpaquePointer, _ mappingStrings: Bool) -> Read {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        let peeked = sd_bus_message_peek_type(message, &type, &contents)
        if peeked == 0 { return .end }
        guard peeked > 0 else { return .failed }
        switch Int32(type) {
        case SD_BUS_TYPE_ARRAY, SD_BUS_TYPE_STRUCT, SD_BUS_TYPE_DICT_ENTRY, SD_BUS_TYPE_VARIANT:
            guard let contents else { return .failed }
            return container(message, type, contents, mappingStrings)
        case SD_BUS_TYPE_STRING, SD_BUS_TYPE_OBJECT_PATH:
            var text: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, type, &text) > 0, let text else { return .failed }
            let string = String(cString: text)
            return .value(Int32(type) == SD_BUS_TYPE_STRING ? .string(string) : .objectPath(string))
        case SD_BUS_TYPE_BOOLEAN:
            var value: Int32 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return .failed }
            return .value(.boolean(value != 0))
        case SD_BUS_TYPE_UINT32:
            var value: UInt32 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return .failed }
            return .value(.uint32(value))
        case SD_BUS_TYPE_UINT64:
            var value: UInt64 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return .failed }
            return .value(.uint64(value))
        default:
            // Every other basic type fits 8 bytes (a string-like one is a pointer into the message).
            var value: UInt64 = 0
            guard sd_bus_message_read_basic(message, type, &value) > 0 else { return .failed }
            return .value(.other(String(UnicodeScalar(UInt8(bitPattern: type)))))
        }
    }

    private static func container(_ message: OpaquePointer, _ type: CChar, _ contents: UnsafePointer<CChar>,
                                  _ mappingStrings: Bool) -> Read {
        let signature = String(cString: contents)
        if mappingStrings, Int32(type) == SD_BUS_TYPE_ARRAY, signature == "{ss}" { return stringMap(message) }
        if Int32(type) == SD_BUS_TYPE_ARRAY, signature == "y" {
            var data: UnsafeRawPointer?
            var size = 0
            guard sd_bus_message_read_array(message, CChar(SD_BUS_TYPE_BYTE), &data, &size) >= 0 else { return .failed }
            guard let data, size > 0 else { return .value(.bytes([])) }
            return .value(.bytes(Array(UnsafeRawBufferPointer(start: data, count: size))))
        }
        guard sd_bus_message_enter_container(message, type, contents) > 0 else { return .failed }
        var children: [BusValue] = []
        loop: while true {
            switch read(message, mappingStrings) {
            case .value(let value): children.append(value)
            case .end: break loop
            case .failed: return .failed
            }
        }
        guard sd_bus_message_exit_container(message) > 0 else { return .failed }
        switch Int32(type) {
        case SD_BUS_TYPE_ARRAY: return .value(.array(element: signature, children))
        case SD_BUS_TYPE_STRUCT: return .value(.tuple(children))
        case SD_BUS_TYPE_DICT_ENTRY:
            guard children.count == 2 else { return .failed }
            return .value(.dictEntry(children[0], children[1]))
        default:
            guard let inner = children.first else { return .failed }
            return .value(.variant(inner))
        }
    }

    /// An "a{ss}" (the current value) as a dictionary, entry by entry; a key that comes twice
    /// keeps its last value, as `BusValue.stringDictionary` of the same entries does.
    private static func stringMap(_ message: OpaquePointer) -> Read {
        guard sd_bus_message_enter_container(message, CChar(SD_BUS_TYPE_ARRAY), "{ss}") > 0 else { return .failed }
        var out: [String: String] = [:]
        while true {
            let entered = sd_bus_message_enter_container(message, CChar(SD_BUS_TYPE_DICT_ENTRY), "ss")
            if entered == 0 { break }
            guard entered > 0 else { return .failed }
            var key: UnsafePointer<CChar>?
            var value: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_STRING), &key) > 0, let key,
                  sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_STRING), &value) > 0, let value,
                  sd_bus_message_exit_container(message) > 0 else { return .failed }
            out[String(cString: key)] = String(cString: value)
        }
        guard sd_bus_message_exit_container(message) > 0 else { return .failed }
        return .value(.stringMap(out))
    }

    /// Appends `arguments` (a tuple: each child is one argument) to `message`; a negative errno
    /// when sd-bus refused one.
    static func append(arguments: BusValue, to message: OpaquePointer) -> Int32 {
        for child in arguments.children {
            let r = append(child, to: message)
            if r < 0 { return r }
        }
        return 0
    }

    private static func append(_ value: BusValue, to message: OpaquePointer) -> Int32 {
        switch value {
        case .string(let text):
            return text.withCString { sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_STRING), $0) }
        case .objectPath(let path):
            return path.withCString { sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_OBJECT_PATH), $0) }
        case .boolean(let flag):
            var value: Int32 = flag ? 1 : 0
            return sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_BOOLEAN), &value)
        case .uint32(var value):
            return sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_UINT32), &value)
        case .uint64(var value):
            return sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_UINT64), &value)
        case .bytes(let bytes):
            // A non-null pointer even when empty.
            let empty: UInt8 = 0
            return withUnsafePointer(to: empty) { fallback in
                bytes.withUnsafeBytes { buffer in
                    sd_bus_message_append_array(message, CChar(SD_BUS_TYPE_BYTE), buffer.baseAddress ?? UnsafeRawPointer(fallback),
                                                buffer.count)
                }
            }
        case .array(let element, let children):
            return inContainer(message, SD_BUS_TYPE_ARRAY, element, children)
        case .dictEntry(let key, let entry):
            var contents = ""
            key.appendSignature(to: &contents)
            entry.appendSignature(to: &contents)
            return inContainer(message, SD_BUS_TYPE_DICT_ENTRY, contents, [key, entry])
        case .tuple(let children):
            var contents = ""
            for child in children { child.appendSignature(to: &contents) }
            return inContainer(message, SD_BUS_TYPE_STRUCT, contents, children)
        case .variant(let inner):
            return inContainer(message, SD_BUS_TYPE_VARIANT, inner.signature, [inner])
        case .stringMap(let entries):
            return append(Variant.stringDictionary(entries), to: message)
        case .other:
            return -EINVAL
        }
    }

    private static func inContainer(_ message: OpaquePointer, _ type: Int32, _ contents: String, _ children: [BusValue]) -> Int32 {
        var r = sd_bus_message_open_container(message, CChar(type), contents)
        if r < 0 { return r }
        for child in children {
            r = append(child, to: message)
            if r < 0 { return r }
        }
        return sd_bus_message_close_container(message)
    }
}

/// A failed call: the D-Bus error the other end (or sd-bus itself) sent, or a local errno.
struct BusErrorInfo: Sendable, Error {
    /// e.g. "org.freedesktop.Secret.Error.IsLocked"; nil for a local failure (connecting, sending).
    let name: String?
    let message: String
    /// The errno sd-bus maps the error to (positive), or the local failure's.
    let errno: Int32

    /// The error of a method-error reply.
    static func of(_ reply: OpaquePointer) -> BusErrorInfo {
        let error = sd_bus_message_get_error(reply)
        return BusErrorInfo(name: error?.pointee.name.map { String(cString: $0) },
                            message: error?.pointee.message.map { String(cString: $0) } ?? "",
                            errno: sd_bus_message_get_errno(reply))
    }

    /// A local failure: `result` is sd-bus's negative errno.
    static func local(_ result: Int32) -> BusErrorInfo {
        let code = result < 0 ? -result : result
        return BusErrorInfo(name: nil, message: String(cString: strerror(code)), errno: code)
    }

    /// The call's deadline passed with no answer.
    static let timedOut = BusErrorInfo(name: nil, message: "Method call timed out", errno: ETIMEDOUT)

    /// sd-bus's own reply timeout ran out (it answers the call with a NoReply of its own).
    var isLocalTimeout: Bool {
        (name == nil && errno == ETIMEDOUT) || (name == BusErrorName.noReply && message == "Method call timed out")
    }

    /// sd-bus lost the connection with the call pending.
    var isConnectionLost: Bool {
        if name == nil { return [ENOENT, ECONNREFUSED, ECONNRESET, EPIPE, ENOTCONN, ENXIO, ESHUTDOWN].contains(errno) }
        return name == BusErrorName.noReply && message == "Connection terminated"
    }
}

/// The D-Bus error names Keygate tells apart.
package enum BusErrorName {
    package static let noReply = "org.freedesktop.DBus.Error.NoReply"
    package static let timeout = "org.freedesktop.DBus.Error.Timeout"
    package static let timedOut = "org.freedesktop.DBus.Error.TimedOut"
    package static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
    package static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    package static let noServer = "org.freedesktop.DBus.Error.NoServer"
    package static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
    package static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    package static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
    package static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    package static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
}
