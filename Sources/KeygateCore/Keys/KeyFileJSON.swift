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
// The tokens are JSONReader's; the files are written by JSONWriter. Pure code.

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
    package typealias Malformed = JSONMalformed

    static let maxDepth = 32

    /// The document `bytes` holds: one value, nothing but white space around it.
    package static func parse(_ bytes: [UInt8]) throws(Malformed) -> Value {
        try bytes.withUnsafeBufferPointer { buffer throws(Malformed) -> Value in
            var parser = Parser(bytes: buffer)
            let value = try parser.value(depth: 0)
            guard parser.reader.peek() == nil else { throw parser.malformed("text after the document") }
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
        var reader: JSONReader

        init(bytes: UnsafeBufferPointer<UInt8>) { reader = JSONReader(bytes: bytes) }

        func malformed(_ what: String) -> Malformed { reader.malformed(what) }

        mutating func value(depth: Int) throws(Malformed) -> Value {
            guard depth < KeyFileJSON.maxDepth else { throw malformed("nesting deeper than \(KeyFileJSON.maxDepth)") }
            guard let next = reader.peek() else { throw malformed("end of input where a value was expected") }
            switch next {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .integer(try reader.integer())
            case UInt8(ascii: "t"): try reader.literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try reader.literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try reader.literal("null"); return .null
            default: throw malformed("unexpected byte 0x\(String(next, radix: 16))")
            }
        }

        mutating func object(depth: Int) throws(Malformed) -> Value {
            try reader.expect(UInt8(ascii: "{"), "'{'")
            var members: [String: Value] = [:]
            if reader.take(UInt8(ascii: "}")) { return .object(members) }
            while true {
                guard reader.peek() == UInt8(ascii: "\"") else { throw malformed("a member name expected") }
                let name = try string()
                try reader.expect(UInt8(ascii: ":"), "':'")
                let member = try value(depth: depth + 1)
                guard members.updateValue(member, forKey: name) == nil else { throw malformed("the member \(name) twice") }
                guard reader.peek() != nil else { throw malformed("end of input in an object") }
                if reader.take(UInt8(ascii: ",")) { continue }
                try reader.expect(UInt8(ascii: "}"), "',' or '}'")
                return .object(members)
            }
        }

        mutating func array(depth: Int) throws(Malformed) -> Value {
            try reader.expect(UInt8(ascii: "["), "'['")
            var elements: [Value] = []
            if reader.take(UInt8(ascii: "]")) { return .array(elements) }
            while true {
                elements.append(try value(depth: depth + 1))
                guard reader.peek() != nil else { throw malformed("end of input in an array") }
                if reader.take(UInt8(ascii: ",")) { continue }
                try reader.expect(UInt8(ascii: "]"), "',' or ']'")
                return .array(elements)
            }
        }

        mutating func string() throws(Malformed) -> String {
            let bytes = try reader.stringBytes()
            guard let text = String(validating: bytes, as: UTF8.self) else { throw malformed("a string that is not UTF-8") }
            return text
        }
    }
}
