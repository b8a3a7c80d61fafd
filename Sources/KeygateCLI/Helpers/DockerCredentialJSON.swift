// The JSON of the docker-credential-helpers protocol: reading the one flat object
// `store` receives ({"ServerURL":…,"Username":…,"Secret":…}; other members and
// non-string values are skipped) and writing answers byte for byte as Go's
// encoding/json Encoder does (HTML-safe escapes \u003c \u003e \u0026, \u2028
// \u2029, a final newline). Decoded values are byte arrays the caller moves into
// SecureBytes at once (SecureBytes(consuming:) wipes them).

enum DockerCredentialJSON {
    struct Malformed: Error { let message: String }

    /// The string members of a JSON object, decoded to UTF-8 bytes.
    static func decodeObject(_ raw: UnsafeRawBufferPointer) throws -> [String: [UInt8]] {
        var parser = Parser(raw: raw)
        return try parser.object()
    }

    /// Appends `bytes` as a JSON string, escaped as Go does.
    static func appendString(_ bytes: some Collection<UInt8>, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        func unicodeEscape(_ v: Int) { out += Array("\\u".utf8) + [hex[(v >> 12) & 15], hex[(v >> 8) & 15], hex[(v >> 4) & 15], hex[v & 15]] }
        out.append(UInt8(ascii: "\""))
        var it = Array(bytes)[...]
        while let b = it.first {
            switch b {
            case UInt8(ascii: "\""): out += Array("\\\"".utf8)
            case UInt8(ascii: "\\"): out += Array("\\\\".utf8)
            case 0x0A: out += Array("\\n".utf8)
            case 0x0D: out += Array("\\r".utf8)
            case 0x09: out += Array("\\t".utf8)
            case UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"): unicodeEscape(Int(b))
            case 0..<0x20: unicodeEscape(Int(b))
            case 0xE2 where it.count >= 3 && it.dropFirst().first == 0x80 && (it.dropFirst(2).first == 0xA8 || it.dropFirst(2).first == 0xA9):
                unicodeEscape(it.dropFirst(2).first == 0xA8 ? 0x2028 : 0x2029)
                it = it.dropFirst(3); continue
            default: out.append(b)
            }
            it = it.dropFirst()
        }
        out.append(UInt8(ascii: "\""))
    }

    private struct Parser {
        let raw: UnsafeRawBufferPointer
        var i = 0

        mutating func skipSpace() { while i < raw.count, [0x20, 0x09, 0x0A, 0x0D].contains(raw[i]) { i += 1 } }

        mutating func expect(_ c: Character) throws {
            skipSpace()
            guard i < raw.count, raw[i] == c.asciiValue else { throw Malformed(message: "expected '\(c)' at byte \(i)") }
            i += 1
        }

        mutating func object() throws -> [String: [UInt8]] {
            var out: [String: [UInt8]] = [:]
            try expect("{")
            skipSpace()
            if i < raw.count, raw[i] == UInt8(ascii: "}") { i += 1; return out }
            while true {
                skipSpace()
                let key = String(decoding: try string(), as: UTF8.self)
                try expect(":")
                skipSpace()
                if i < raw.count, raw[i] == UInt8(ascii: "\"") {
                    out[key] = try string()
                } else {
                    try skipValue()
                }
                skipSpace()
                guard i < raw.count else { throw Malformed(message: "unexpected end of JSON input") }
                if raw[i] == UInt8(ascii: ",") { i += 1; continue }
                if raw[i] == UInt8(ascii: "}") { i += 1; return out }
                throw Malformed(message: "expected ',' or '}' at byte \(i)")
            }
        }

        /// Skips a non-string scalar (null, true, false, a number).
        mutating func skipValue() throws {
            let start = i
            while i < raw.count, ![UInt8(ascii: ","), UInt8(ascii: "}")].contains(raw[i]) { i += 1 }
            let token = String(decoding: UnsafeRawBufferPointer(rebasing: raw[start..<i]), as: UTF8.self)
                .filter { !$0.isWhitespace }
            guard token == "null" || token == "true" || token == "false" || Double(token) != nil else {
                throw Malformed(message: "unsupported JSON value at byte \(start)")
            }
        }

        mutating func string() throws -> [UInt8] {
            guard i < raw.count, raw[i] == UInt8(ascii: "\"") else { throw Malformed(message: "expected a string at byte \(i)") }
            i += 1
            var out: [UInt8] = []
            while i < raw.count {
                let b = raw[i]
                i += 1
                if b == UInt8(ascii: "\"") { return out }
                if b < 0x20 { throw Malformed(message: "control character in a string at byte \(i - 1)") }
                guard b == UInt8(ascii: "\\") else { out.append(b); continue }
                guard i < raw.count else { break }
                let e = raw[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar), i + 1 < raw.count, raw[i] == UInt8(ascii: "\\"), raw[i + 1] == UInt8(ascii: "u") {
                        i += 2
                        let low = try hex4()
                        scalar = (0xDC00..<0xE000).contains(low) ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                    }
                    out += Array(String(Unicode.Scalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8)
                default: throw Malformed(message: "bad escape at byte \(i - 1)")
                }
            }
            throw Malformed(message: "unexpected end of JSON input")
        }

        mutating func hex4() throws -> UInt32 {
            guard i + 4 <= raw.count,
                  let v = UInt32(String(decoding: UnsafeRawBufferPointer(rebasing: raw[i..<(i + 4)]), as: UTF8.self), radix: 16)
            else { throw Malformed(message: "bad \\u escape at byte \(i)") }
            i += 4
            return v
        }
    }
}
