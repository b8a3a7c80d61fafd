// JSON text written the way JSONEncoder writes it with `[.prettyPrinted, .sortedKeys]`, for the
// keychain's key files (protectors, keys.json), so that the programs that write them need no
// Foundation: the login helper writes keys.json and re-wraps the login protector, and each
// start of a program that links FoundationEssentials relocates its metadata (docs/DECISIONS.md,
// "The login helper links no Foundation"). Files written before keep their bytes: the tests
// compare this writer with JSONEncoder itself. Pure code.

/// A JSON value as the key files hold them: strings, whole numbers and objects.
package indirect enum JSONValue: Equatable, Sendable {
    case string(String)
    case integer(Int64)
    case unsigned(UInt64)
    case object([String: JSONValue])
}

package enum JSONWriter {
    /// `value` as JSONEncoder writes it with `[.prettyPrinted, .sortedKeys]`: members in the byte
    /// order of their names, two spaces of indent, " : " between a name and its value, no
    /// newline at the end, and '/' escaped.
    package static func pretty(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(512)
        write(value, depth: 0, to: &out)
        return out
    }

    private static func write(_ value: JSONValue, depth: Int, to out: inout [UInt8]) {
        switch value {
        case .string(let text): writeString(text, to: &out)
        case .integer(let number): out += Array(String(number).utf8)
        case .unsigned(let number): out += Array(String(number).utf8)
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            out.append(UInt8(ascii: "\n"))
            var first = true
            for (name, member) in members.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                if !first { out += [UInt8(ascii: ","), UInt8(ascii: "\n")] }
                first = false
                indent(depth + 1, to: &out)
                writeString(name, to: &out)
                out += [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")]
                write(member, depth: depth + 1, to: &out)
            }
            out.append(UInt8(ascii: "\n"))
            indent(depth, to: &out)
            out.append(UInt8(ascii: "}"))
        }
    }

    private static func indent(_ depth: Int, to out: inout [UInt8]) {
        out += repeatElement(UInt8(ascii: " "), count: 2 * depth)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case UInt8(ascii: "/"): out += [UInt8(ascii: "\\"), UInt8(ascii: "/")]
            case 0x08: out += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: out += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                out += Array("\\u00".utf8)
                out += [hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0F)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
