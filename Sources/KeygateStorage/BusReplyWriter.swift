// A reply's arguments written straight into its sd-bus message, value by value, for the calls a
// daemon answers most often: no BusValue tree is built, kept or released. Bytes are appended from
// the caller's buffer (locked memory for a secret), and a message that has carried a secret is
// marked sensitive, so sd-bus wipes it when it frees it. The reply's shape is the caller's.
import KeygateCore
internal import CSDBus

package struct BusReplyWriter {
    let message: OpaquePointer

    /// The containers a reply opens.
    package enum Container {
        case array, structure, dictEntry

        var type: CChar {
            switch self {
            case .array: return CChar(SD_BUS_TYPE_ARRAY)
            case .structure: return CChar(SD_BUS_TYPE_STRUCT)
            case .dictEntry: return CChar(SD_BUS_TYPE_DICT_ENTRY)
            }
        }
    }

    /// Opens a container whose contents have the signature `contents` ("o" for an "ao").
    package func open(_ container: Container, _ contents: String) -> Bool {
        sd_bus_message_open_container(message, container.type, contents) >= 0
    }

    package func close() -> Bool { sd_bus_message_close_container(message) >= 0 }

    /// An "o"; "/" when `path` is not a valid object path, as `Variant.objectPath` writes it.
    package func objectPath(_ path: String) -> Bool {
        let valid = Variant.isObjectPath(path) ? path : "/"
        return valid.withCString { sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_OBJECT_PATH), $0) } >= 0
    }

    /// An "ao".
    package func objectPaths(_ paths: [String]) -> Bool {
        guard open(.array, "o") else { return false }
        for path in paths where !objectPath(path) { return false }
        return close()
    }

    package func string(_ text: String) -> Bool {
        text.withCString { sd_bus_message_append_basic(message, CChar(SD_BUS_TYPE_STRING), $0) } >= 0
    }

    /// An "ay" holding a copy of `bytes`.
    package func bytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        // A non-null pointer even when empty.
        let empty: UInt8 = 0
        return withUnsafePointer(to: empty) { fallback in
            sd_bus_message_append_array(message, CChar(SD_BUS_TYPE_BYTE), bytes.baseAddress ?? UnsafeRawPointer(fallback), bytes.count)
        } >= 0
    }

    /// An "ay" holding a copy of a secret: the message is wiped when sd-bus frees it.
    package func secretBytes(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard sd_bus_message_sensitive(message) >= 0 else { return false }
        return self.bytes(bytes)
    }
}
