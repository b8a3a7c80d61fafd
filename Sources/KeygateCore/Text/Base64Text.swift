// Standard base64 (RFC 4648, with padding), so the library needs no Foundation: the text form
// of kSecAttrGeneric's bytes in an item's attributes (ItemField.generic), and of the salts,
// nonces, wrapped keys and public keys in the key files (Protector, PublicKeys). Pure code.

package enum Base64Text {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = (b0 << 16) | (b1 << 8) | b2
            out.append(alphabet[Int((n >> 18) & 63)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(i + 1 < bytes.count ? alphabet[Int((n >> 6) & 63)] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[Int(n & 63)] : UInt8(ascii: "="))
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    package static func decode(_ text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 4 * 3)
        func value(_ c: UInt8) -> UInt32? {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): return UInt32(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): return UInt32(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt32(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "+"): return 62
            case UInt8(ascii: "/"): return 63
            default: return nil
            }
        }
        var i = 0
        while i < chars.count {
            let last = i + 4 == chars.count
            let pad = last ? chars[i..<i + 4].reversed().prefix { $0 == UInt8(ascii: "=") }.count : 0
            guard pad <= 2 else { return nil }
            var n: UInt32 = 0
            for j in 0..<4 {
                if j >= 4 - pad { n <<= 6; continue }
                guard let v = value(chars[i + j]) else { return nil }
                n = (n << 6) | v
            }
            out.append(UInt8((n >> 16) & 0xff))
            if pad < 2 { out.append(UInt8((n >> 8) & 0xff)) }
            if pad < 1 { out.append(UInt8(n & 0xff)) }
            i += 4
        }
        return out
    }
}
