// The JSON of the docker-credential-helpers protocol: reading the one flat object
// `store` receives ({"ServerURL":…,"Username":…,"Secret":…}; other members and
// non-string values are skipped; the tokens are KeygateCore's JSONReader's) and
// writing answers byte for byte as Go's encoding/json Encoder does (HTML-safe
// escapes \u003c \u003e \u0026, \u2028 \u2029, a final newline). Decoded values
// are byte arrays the caller moves into SecureBytes at once (SecureBytes(consuming:)
// wipes them); a secret being written is read where it lies, never copied.

import KeygateCore

enum DockerCredentialJSON {
    typealias Malformed = JSONMalformed

    /// The string members of one JSON object, unescaped to UTF-8 bytes. Members of other scalar
    /// types are skipped; a nested object or array is refused, as is a name given twice.
    static func decodeObject(_ raw: UnsafeRawBufferPointer) throws(Malformed) -> [String: [UInt8]] {
        try raw.withMemoryRebound(to: UInt8.self) { bytes throws(Malformed) in try decodeObject(bytes) }
    }

    private static func decodeObject(_ bytes: UnsafeBufferPointer<UInt8>) throws(Malformed) -> [String: [UInt8]] {
        var reader = JSONReader(bytes: bytes)
        var out: [String: [UInt8]] = [:]
        var names: Set<String> = []
        try reader.expect(UInt8(ascii: "{"), "'{'")
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                guard reader.peek() == UInt8(ascii: "\"") else { throw reader.malformed("a member name expected") }
                let name = String(decoding: try reader.stringBytes(), as: UTF8.self)
                guard names.insert(name).inserted else { throw reader.malformed("the member \(name) twice") }
                try reader.expect(UInt8(ascii: ":"), "':'")
                switch reader.peek() {
                case UInt8(ascii: "\"")?: out[name] = try reader.stringBytes()
                case UInt8(ascii: "t")?: try reader.literal("true")
                case UInt8(ascii: "f")?: try reader.literal("false")
                case UInt8(ascii: "n")?: try reader.literal("null")
                case UInt8(ascii: "-")?, (UInt8(ascii: "0")...UInt8(ascii: "9"))?: try reader.skipNumber()
                default: throw reader.malformed("a string, number, true, false or null expected")
                }
            } while reader.take(UInt8(ascii: ","))
            try reader.expect(UInt8(ascii: "}"), "',' or '}'")
        }
        guard reader.peek() == nil else { throw reader.malformed("text after the object") }
        return out
    }

    /// Appends `bytes` as a JSON string, escaped as Go does. Reads `bytes` in place: a secret
    /// passed here is copied nowhere but into `out`, which the caller sized and wipes.
    static func appendString(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        func unicodeEscape(_ v: Int) { out += Array("\\u".utf8) + [hex[(v >> 12) & 15], hex[(v >> 8) & 15], hex[(v >> 4) & 15], hex[v & 15]] }
        out.append(UInt8(ascii: "\""))
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let b = bytes[i]
            i = bytes.index(after: i)
            switch b {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"): unicodeEscape(Int(b))
            case 0..<0x20: unicodeEscape(Int(b))
            case 0xE2:
                // U+2028 and U+2029 (E2 80 A8, E2 80 A9) are escaped; any other E2 sequence is kept.
                let second = i != bytes.endIndex ? bytes[i] : nil
                let thirdIndex = i != bytes.endIndex ? bytes.index(after: i) : i
                let third = thirdIndex != bytes.endIndex ? bytes[thirdIndex] : nil
                if second == 0x80, third == 0xA8 || third == 0xA9 {
                    unicodeEscape(third == 0xA8 ? 0x2028 : 0x2029)
                    i = bytes.index(after: thirdIndex)
                } else {
                    out.append(b)
                }
            default: out.append(b)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
