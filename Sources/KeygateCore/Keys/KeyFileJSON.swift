// The JSON reader of the keychain's own small files (protectors/*.json, keys.json), by hand and
// without FoundationEssentials: the login path (keygate-pam-helper's auth) reads login.json and
// keys.json at every login, and JSONDecoder's first uses (its generic metadata, the conformance
// scans behind them) cost more than the rest of those reads together (docs/PERFORMANCE_LOG.md).
// Strict RFC 8259 JSON, the subset these files need: objects, arrays, strings (every escape,
// UTF-8 validated), integers (a fraction or exponent is malformed: the writers never write
// one), true, false, null. A duplicate member name is malformed (two readers could disagree on
// which one counts). Nesting is bounded, so garbage cannot exhaust the stack. The typed reads
// (`Members`) follow Codable's rules for the types they replace: a required member missing or
// of another type fails, an optional one may be absent or null, unknown members are skipped.
// Writing stays with JSONEncoder (written once, at `init` and `passwd`). Pure code.

package enum KeyFileJSON {
    package indirect enum Value: Equatable, Sendable {
        case object([String: Value])
        case array([Value])
        case string(String)
        case integer(Int64)
        case bool(Bool)
        case null
    }

    /// What is wrong with a document, for tests and messages; callers name the file.
    package struct Malformed: Error, Equatable {
        package let message: String
    }

    static let maxDepth = 32

    /// The document `bytes` holds: one value, nothing but white space around it.
    package static func parse(_ bytes: [UInt8]) throws(Malformed) -> Value {
        try bytes.withUnsafeBufferPointer { buffer throws(Malformed) -> Value in
            var parser = Parser(bytes: buffer)
            let value = try parser.value(depth: 0)
            parser.skipSpace()
            guard parser.index == buffer.count else { throw parser.malformed("text after the document") }
            return value
        }
    }

    /// The members of an object, read as Codable would read them into the types that replace it.
    package struct Members {
        let members: [String: Value]

        package init(_ value: Value) throws(Malformed) {
            guard case .object(let members) = value else { throw Malformed(message: "not an object") }
            self.members = members
        }

        package func string(_ name: String) throws(Malformed) -> String {
            guard let value = try optionalString(name) else { throw Malformed(message: "no \(name)") }
            return value
        }

        package func optionalString(_ name: String) throws(Malformed) -> String? {
            switch members[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw Malformed(message: "\(name) is not a string")
            }
        }

        package func int(_ name: String) throws(Malformed) -> Int {
            guard case .integer(let number)? = members[name], let value = Int(exactly: number) else {
                throw Malformed(message: "\(name) is not an integer")
            }
            return value
        }

        package func unsigned(_ name: String) throws(Malformed) -> UInt64 {
            guard let value = try optionalUnsigned(name) else { throw Malformed(message: "no \(name)") }
            return value
        }

        package func optionalUnsigned(_ name: String) throws(Malformed) -> UInt64? {
            switch members[name] {
            case nil, .null?: return nil
            case .integer(let number)? where number >= 0: return UInt64(number)
            default: throw Malformed(message: "\(name) is not a non-negative integer")
            }
        }

        package func optionalObject(_ name: String) throws(Malformed) -> Members? {
            switch members[name] {
            case nil, .null?: return nil
            case .object?: return try Members(members[name] ?? .null)
            default: throw Malformed(message: "\(name) is not an object")
            }
        }

        /// An object whose every member is a string ([String: String] in Codable).
        package func optionalStringMap(_ name: String) throws(Malformed) -> [String: String]? {
            guard let object = try optionalObject(name) else { return nil }
            var out: [String: String] = [:]
            for (key, value) in object.members {
                guard case .string(let text) = value else { throw Malformed(message: "\(name).\(key) is not a string") }
                out[key] = text
            }
            return out
        }
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func malformed(_ what: String) -> Malformed { Malformed(message: "\(what) at byte \(index)") }

        mutating func skipSpace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(Malformed) -> Value {
            guard depth < KeyFileJSON.maxDepth else { throw malformed("nesting deeper than \(KeyFileJSON.maxDepth)") }
            skipSpace()
            guard index < bytes.count else { throw malformed("end of input where a value was expected") }
            switch bytes[index] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try integer())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: throw malformed("unexpected byte 0x\(String(bytes[index], radix: 16))")
            }
        }

        mutating func literal(_ word: StaticString) throws(Malformed) {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { throw malformed("truncated literal") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw malformed("unknown literal")
            }
            index += count
        }

        mutating func object(depth: Int) throws(Malformed) -> Value {
            index += 1  // {
            var members: [String: Value] = [:]
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed("a member name expected") }
                let name = try string()
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw malformed("':' expected") }
                index += 1
                let member = try value(depth: depth + 1)
                guard members.updateValue(member, forKey: name) == nil else { throw malformed("the member \(name) twice") }
                skipSpace()
                guard index < bytes.count else { throw malformed("end of input in an object") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "}") else { throw malformed("',' or '}' expected") }
                index += 1
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(Malformed) -> Value {
            index += 1  // [
            var elements: [Value] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                skipSpace()
                guard index < bytes.count else { throw malformed("end of input in an array") }
                if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
                guard bytes[index] == UInt8(ascii: "]") else { throw malformed("',' or ']' expected") }
                index += 1
                return .array(elements)
            }
        }

        /// An integer as JSON writes one: -?(0|[1-9][0-9]*), within Int64.
        mutating func integer() throws(Malformed) -> Int64 {
            let negative = bytes[index] == UInt8(ascii: "-")
            if negative { index += 1 }
            let start = index
            var magnitude: UInt64 = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { throw malformed("a number too large") }
                magnitude = sum
                index += 1
            }
            guard index > start else { throw malformed("a digit expected") }
            guard !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else { throw malformed("a number with a leading zero") }
            if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
                throw malformed("a number that is not an integer")
            }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { throw malformed("a number too large") }
                return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
            }
            guard magnitude <= UInt64(Int64.max) else { throw malformed("a number too large") }
            return Int64(magnitude)
        }

        mutating func string() throws(Malformed) -> String {
            index += 1  // "
            var out: [UInt8] = []
            while true {
                guard index < bytes.count else { throw malformed("end of input in a string") }
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    guard let text = String(validating: out, as: UTF8.self) else { throw malformed("a string that is not UTF-8") }
                    return text
                case UInt8(ascii: "\\"):
                    guard index < bytes.count else { throw malformed("end of input in an escape") }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"): try unicodeEscape(into: &out)
                    default: throw malformed("an unknown escape")
                    }
                case 0..<0x20: throw malformed("a control character in a string")
                default: out.append(byte)
                }
            }
        }

        mutating func hex4() throws(Malformed) -> UInt32 {
            guard bytes.count - index >= 4 else { throw malformed("a short \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[index]
                let digit: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw malformed("a bad \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func unicodeEscape(into out: inout [UInt8]) throws(Malformed) {
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                    throw malformed("a lone surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00..<0xE000).contains(low) else { throw malformed("a lone surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw malformed("a lone surrogate") }
            UTF8.encode(unicode) { out.append($0) }
        }
    }
}
