// A received call's arguments read straight out of its sd-bus message, one typed value after
// another, for the calls a daemon answers most often: no BusValue tree is built, kept or released.
// It reads shapes only (a string-to-string dictionary, a list of object paths, one object path);
// which shapes a call may have and what limits apply are the caller's rules, not this file's.
import KeygateCore
internal import CSDBus

package struct BusCallReader {
    let message: OpaquePointer

    /// Reads an "a{ss}", handing each entry to `body` in the order it was sent (a key sent twice
    /// comes twice). False when the message does not hold one here.
    package func readStringPairs(_ body: (String, String) -> Void) -> Bool {
        guard sd_bus_message_enter_container(message, CChar(SD_BUS_TYPE_ARRAY), "{ss}") > 0 else { return false }
        while true {
            let entered = sd_bus_message_enter_container(message, CChar(SD_BUS_TYPE_DICT_ENTRY), "ss")
            if entered == 0 { break }
            guard entered > 0 else { return false }
            var key: UnsafePointer<CChar>?
            var value: UnsafePointer<CChar>?
            guard sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_STRING), &key) > 0, let key,
                  sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_STRING), &value) > 0, let value,
                  sd_bus_message_exit_container(message) > 0 else { return false }
            body(String(cString: key), String(cString: value))
        }
        return sd_bus_message_exit_container(message) > 0
    }

    /// Reads an "ao", handing each path to `body` in order. False when the message does not hold one here.
    package func readObjectPaths(_ body: (String) -> Void) -> Bool {
        guard sd_bus_message_enter_container(message, CChar(SD_BUS_TYPE_ARRAY), "o") > 0 else { return false }
        while true {
            var path: UnsafePointer<CChar>?
            let r = sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_OBJECT_PATH), &path)
            if r == 0 { break }
            guard r > 0, let path else { return false }
            body(String(cString: path))
        }
        return sd_bus_message_exit_container(message) > 0
    }

    /// Reads an "o"; nil when the message does not hold one here.
    package func readObjectPath() -> String? {
        var path: UnsafePointer<CChar>?
        guard sd_bus_message_read_basic(message, CChar(SD_BUS_TYPE_OBJECT_PATH), &path) > 0, let path else { return nil }
        return String(cString: path)
    }
}
