// The line syntax every Keygate configuration file shares, policy files and keygate.conf, as
// ConfigFile is the one way both are opened: lines split at LF (a trailing CR dropped, a UTF-8
// byte-order mark skipped), plain UTF-8 without control characters but tab, blank lines and
// `#` or `;` comments on lines of their own, `[...]` headers, and `key = value` with blanks
// trimmed. Each file's own grammar (which headers and keys exist, what values mean) is its
// parser's: PolicyParser and StoreConfig. Works on bytes with no recursion: linear in the input.

package enum ConfigSyntax {
    /// One line as the shared syntax reads it. Columns count bytes, from 1.
    package enum Line: Equatable, Sendable {
        /// Blank, or a comment.
        case nothing
        /// A section header: the line's `[` is at `column` (its grammar is the file's own).
        case header(column: Int)
        /// `key = value`, the value trimmed (empty when there is none: the file's parser says so,
        /// after checking the key), with the columns where each starts.
        case setting(key: String, keyColumn: Int, value: String, valueColumn: Int)
        /// What is wrong with the line, and where.
        case problem(column: Int, message: String)
    }

    /// Calls `body` with each line's bytes and number, until it returns false.
    package static func forEachLine(_ bytes: [UInt8], _ body: ([UInt8], Int) -> Bool) {
        var number = 0
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while start <= bytes.count {
            var end = start
            while end < bytes.count, bytes[end] != 0x0A { end += 1 }
            number += 1
            var stop = end
            if stop > start, bytes[stop - 1] == 0x0D { stop -= 1 }
            if start < stop || end < bytes.count {
                guard body(Array(bytes[start..<stop]), number) else { return }
            }
            start = end + 1
        }
    }

    /// What one line is. `fileKind` names the file in messages ("a policy file", "keygate.conf").
    package static func classify(_ bytes: [UInt8], fileKind: String) -> Line {
        if let (column, problem) = badBytes(bytes, fileKind: fileKind) { return .problem(column: column, message: problem) }
        var i = 0
        while i < bytes.count, isBlank(bytes[i]) { i += 1 }
        guard i < bytes.count else { return .nothing }
        switch bytes[i] {
        case UInt8(ascii: "#"), UInt8(ascii: ";"): return .nothing
        case UInt8(ascii: "["): return .header(column: i + 1)
        default: break
        }
        let keyStart = i
        while i < bytes.count, isKeyByte(bytes[i]) { i += 1 }
        let key = String(decoding: bytes[keyStart..<i], as: UTF8.self)
        guard !key.isEmpty else {
            return .problem(column: keyStart + 1, message: "expected a key, a [section] header or a # comment")
        }
        while i < bytes.count, isBlank(bytes[i]) { i += 1 }
        guard i < bytes.count, bytes[i] == UInt8(ascii: "=") else {
            return .problem(column: i + 1, message: i < bytes.count ? "expected `=` after the key \"\(key)\""
                                                                     : "expected `= VALUE` after the key \"\(key)\"")
        }
        i += 1
        while i < bytes.count, isBlank(bytes[i]) { i += 1 }
        var end = bytes.count
        while end > i, isBlank(bytes[end - 1]) { end -= 1 }
        return .setting(key: key, keyColumn: keyStart + 1, value: String(decoding: bytes[i..<max(i, end)], as: UTF8.self),
                        valueColumn: i + 1)
    }

    /// A blank: space or tab (also between the words of a value).
    package static func isBlank(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 }

    /// A byte of a key: ASCII letters, digits, `-` and `_`.
    package static func isKeyByte(_ b: UInt8) -> Bool {
        (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x5F
    }

    /// The first byte that cannot be in a configuration file (invalid UTF-8, or a control character
    /// other than tab), with its column.
    static func badBytes(_ bytes: [UInt8], fileKind: String) -> (Int, String)? {
        // Printable ASCII and tabs, as nearly every line is: no decoding needed.
        if bytes.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) { return nil }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                if encoded.count == 1, let byte = encoded.first, (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                    return (offset + 1, "unexpected control character (byte 0x\(String(byte, radix: 16))): \(fileKind) is plain text")
                }
                offset += encoded.count
            case .emptyInput:
                return nil
            case .error:
                return (offset + 1, "invalid UTF-8: \(fileKind) is plain UTF-8 text")
            }
        }
    }
}
