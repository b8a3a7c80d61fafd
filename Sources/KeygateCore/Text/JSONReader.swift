// JSON text read byte by byte (RFC 8259), for the two readers that cannot use JSONDecoder: the
// keychain's key files on the login path (KeyFileJSON, where JSONDecoder's first use costs more
// than the read) and the docker credential helper's input, whose secret must stay bytes and never
// become a Swift String. This reads the tokens: white space, strings (every escape, surrogate
// pairs joined, a lone surrogate refused) as UTF-8 bytes, literals and numbers. What a document
// may hold, and how deep, is the caller's. Pure code.

package struct JSONMalformed: Error, Equatable {
    package let message: String

    package init(message: String) { self.message = message }
}

package struct JSONReader {
    let bytes: UnsafeBufferPointer<UInt8>
    package private(set) var index = 0

    package init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    package func malformed(_ what: String) -> JSONMalformed { JSONMalformed(message: "\(what) at byte \(index)") }

    package var atEnd: Bool { index >= bytes.count }

    /// The byte after any white space, not consumed; nil at the end of the input.
    package mutating func peek() -> UInt8? {
        skipSpace()
        return atEnd ? nil : bytes[index]
    }

    package mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Consumes `byte` after any white space, or says that `what` was expected.
    package mutating func expect(_ byte: UInt8, _ what: String) throws(JSONMalformed) {
        guard peek() == byte else { throw malformed("\(what) expected") }
        index += 1
    }

    /// Consumes `byte` after any white space if it is next.
    package mutating func take(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        index += 1
        return true
    }

    package mutating func literal(_ word: StaticString) throws(JSONMalformed) {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw malformed("truncated literal") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
            throw malformed("unknown literal")
        }
        index += count
    }

    /// A string's contents, unescaped, as UTF-8 bytes; the reader stands on its opening quote.
    /// The bytes are not checked to be UTF-8: a caller that makes a String validates. The array is
    /// sized once, so a secret read here is never copied by a growing array.
    package mutating func stringBytes() throws(JSONMalformed) -> [UInt8] {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed("a string expected") }
        index += 1
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count - index)
        while true {
            guard index < bytes.count else { throw malformed("end of input in a string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return out
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

    /// An integer as JSON writes one: -?(0|[1-9][0-9]*), within Int64; a fraction or an exponent
    /// is refused.
    package mutating func integer() throws(JSONMalformed) -> Int64 {
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var magnitude: UInt64 = 0
        while let d = digit() {
            let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(d))
            guard !overflow1, !overflow2 else { throw malformed("a number too large") }
            magnitude = sum
        }
        try checkIntegerPart(from: start)
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

    /// Steps over any JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
    package mutating func skipNumber() throws(JSONMalformed) {
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let start = index
        while digit() != nil {}
        try checkIntegerPart(from: start)
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            try digits("a digit after '.'")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            try digits("a digit in the exponent")
        }
    }

    private mutating func digit() -> UInt8? {
        guard index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") else { return nil }
        index += 1
        return bytes[index - 1] - UInt8(ascii: "0")
    }

    private mutating func digits(_ what: String) throws(JSONMalformed) {
        let start = index
        while digit() != nil {}
        guard index > start else { throw malformed("\(what) expected") }
    }

    private func checkIntegerPart(from start: Int) throws(JSONMalformed) {
        guard index > start else { throw malformed("a digit expected") }
        guard !(bytes[start] == UInt8(ascii: "0") && index - start > 1) else { throw malformed("a number with a leading zero") }
    }

    private mutating func hex4() throws(JSONMalformed) -> UInt32 {
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

    private mutating func unicodeEscape(into out: inout [UInt8]) throws(JSONMalformed) {
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
