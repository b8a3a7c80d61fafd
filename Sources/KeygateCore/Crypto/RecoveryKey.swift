// The recovery key: 32 random bytes shown once at `keygate init`, in a form people
// can copy by hand: Crockford base32 (no I, L, O or U, so 1/I/L and 0/O are read the
// same), 56 symbols in 14 dash-separated groups of 4, the last 3 bytes being a BLAKE2b
// checksum (GenericHash) that catches typos. The text is built and parsed in locked memory.

package enum RecoveryKey {
    static let keyBytes = 32
    static let checksumBytes = 3
    static let symbolCount = (keyBytes + checksumBytes) * 8 / 5   // 56
    static let groupLength = 4
    static let textLength = symbolCount + symbolCount / groupLength - 1  // 69
    private static let alphabet: [UInt8] = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)
    private static let checksumKey: [UInt8] = Array("keygate.recovery-key.checksum.v1".utf8)

    static func generate() throws -> SecureBytes {
        try SecureBytes.random(count: keyBytes)
    }

    /// "ABCD-EFGH-...": 14 groups of 4, ASCII, in locked memory.
    package static func format(_ key: SecureBytes) throws -> SecureBytes {
        guard key.count == keyBytes else {
            throw KeychainError.param("internal: a recovery key is \(keyBytes) bytes, not \(key.count)")
        }
        let payload = try SecureBytes(count: keyBytes + checksumBytes)
        let check = try checksum(key)
        payload.withUnsafeMutableBytes { p in
            key.withUnsafeBytes { k in p.copyMemory(from: k) }
            check.withUnsafeBytes { c in
                for i in 0..<checksumBytes { p[keyBytes + i] = c[i] }
            }
        }
        let text = try SecureBytes(count: textLength)
        text.withUnsafeMutableBytes { out in
            payload.withUnsafeBytes { p in
                for i in 0..<symbolCount {
                    let position = (i / groupLength) * (groupLength + 1) + i % groupLength
                    out[position] = alphabet[Int(fiveBits(p, at: i * 5))]
                    if i % groupLength == groupLength - 1, position + 1 < out.count { out[position + 1] = UInt8(ascii: "-") }
                }
            }
        }
        return text
    }

    /// Reads a recovery key typed or pasted by a person: case, spaces, dashes and line
    /// breaks do not matter, and O/I/L are read as 0/1/1. A wrong length or character is
    /// .param; a checksum mismatch (a typo) is .authFailed.
    package static func parse(_ text: SecureBytes) throws -> SecureBytes {
        let symbols = try SecureBytes(count: symbolCount)
        var found = 0
        var invalid = false
        symbols.withUnsafeMutableBytes { out in
            text.withUnsafeBytes { input in
                for byte in input {
                    if byte == UInt8(ascii: "-") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
                        || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") { continue }
                    guard let value = symbolValue(byte) else { invalid = true; continue }
                    if found < out.count { out[found] = value }
                    found += 1
                }
            }
        }
        guard !invalid else {
            throw KeychainError.param("""
                the recovery key contains a character that is not one of its letters and digits: check it against the copy you \
                saved (dashes and spaces are fine)
                """)
        }
        guard found == symbolCount else {
            throw KeychainError.param("""
                a recovery key has \(symbolCount) letters and digits (\(symbolCount / groupLength) groups of \(groupLength)); this \
                one has \(found): check that you copied all of it
                """)
        }
        let payload = try SecureBytes(count: keyBytes + checksumBytes)
        payload.withUnsafeMutableBytes { p in
            symbols.withUnsafeBytes { s in
                for i in 0..<symbolCount {
                    for bit in 0..<5 where s[i] & (0x10 >> bit) != 0 {
                        let offset = i * 5 + bit
                        p[offset / 8] |= 0x80 >> (offset % 8)
                    }
                }
            }
        }
        let key = try payload.slice(from: 0, length: keyBytes)
        let expected = try checksum(key)
        let matches = expected.withUnsafeBytes { e in
            payload.withUnsafeBytes { p in
                (0..<checksumBytes).allSatisfy { e[$0] == p[keyBytes + $0] }
            }
        }
        guard matches else {
            throw KeychainError.authFailed("this recovery key has a typo (its checksum does not match): check each group against the copy you saved")
        }
        return key
    }

    private static func checksum(_ key: SecureBytes) throws -> SecureBytes {
        try GenericHash.hash(key, key: checksumKey, outputBytes: 16)
    }

    /// The 5 bits starting at bit `offset` (big-endian bit order).
    private static func fiveBits(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt8 {
        let index = offset / 8
        let high = UInt16(bytes[index])
        let low = index + 1 < bytes.count ? UInt16(bytes[index + 1]) : 0
        let window = (high << 8) | low
        return UInt8((window >> (11 - UInt16(offset % 8))) & 0x1F)
    }

    private static func symbolValue(_ byte: UInt8) -> UInt8? {
        var upper = byte
        if upper >= UInt8(ascii: "a") && upper <= UInt8(ascii: "z") { upper -= 0x20 }
        switch upper {
        case UInt8(ascii: "O"): return 0
        case UInt8(ascii: "I"), UInt8(ascii: "L"): return 1
        default:
            guard let index = alphabet.firstIndex(of: upper) else { return nil }
            return UInt8(index)
        }
    }
}
