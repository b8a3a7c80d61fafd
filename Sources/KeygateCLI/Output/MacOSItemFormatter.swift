// The attribute block macOS security(1) prints for find-*-password, delete-*-password
// and dump-keychain (`keychain:`, `version: 512`, `class: "genp"`, `attributes:` then
// one `"tag"<type>=value` line per attribute in Apple's order), and its `password:`
// line. Values are shown as print_buffer in Apple's security tool
// (keychain_utilities.c) shows them: quoted when every byte is printable, else 0x-hex,
// then the quoted form with octal escapes. Only find -g and dump-keychain -d pass a
// secret here; attributes never hold one. The label is macOS's 0x00000007 line.

import Keygate

enum MacOSItemFormatter {
    /// What the `keychain:` line names on Linux: Keygate's per-user data folder
    /// ($XDG_DATA_HOME/keygate, default ~/.local/share/keygate), the counterpart of
    /// macOS's ~/Library/Keychains/login.keychain-db, whichever store holds the items.
    static func keychainPath(_ environment: [String: String]) -> String {
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return xdg + "/keygate" }
        return (environment["HOME"] ?? "") + "/.local/share/keygate"
    }

    static func block(_ a: ItemAttributes, keychain: String) -> String {
        let id = a.identity
        var out = "keychain: \(bytes(Array(keychain.utf8)))\nversion: 512\n"
        let null = "<NULL>"
        var lines: [String] = []
        func blob(_ tag: String, _ value: String?) {
            lines.append("\(tag)<blob>=" + (value.map { bytes(Array($0.utf8)) } ?? null))
        }
        let label: String? = a.label
        switch id.itemClass {
        case .genericPassword:
            out += "class: \"genp\"\nattributes:\n"
            blob("0x00000007 ", label)
            lines.append("0x00000008 <blob>=<NULL>")
            blob("\"acct\"", id.account)
            lines.append("\"cdat\"<timedate>=" + timedate(a.created))
            lines.append("\"crtr\"<uint32>=<NULL>")
            lines.append("\"cusi\"<sint32>=<NULL>")
            blob("\"desc\"", a.description)
            lines.append("\"gena\"<blob>=" + (a.generic.map(bytes) ?? null))
            blob("\"icmt\"", a.comment)
            lines.append("\"invi\"<sint32>=<NULL>")
            lines.append("\"mdat\"<timedate>=" + timedate(a.modified))
            lines.append("\"nega\"<sint32>=<NULL>")
            lines.append("\"prot\"<blob>=<NULL>")
            lines.append("\"scrp\"<sint32>=<NULL>")
            blob("\"svce\"", id.service)
            lines.append("\"type\"<uint32>=<NULL>")
        case .internetPassword:
            out += "class: \"inet\"\nattributes:\n"
            blob("0x00000007 ", label)
            lines.append("0x00000008 <blob>=<NULL>")
            blob("\"acct\"", id.account)
            blob("\"atyp\"", id.authenticationType?.rawValue ?? AuthenticationType.default.rawValue)
            lines.append("\"cdat\"<timedate>=" + timedate(a.created))
            lines.append("\"crtr\"<uint32>=<NULL>")
            lines.append("\"cusi\"<sint32>=<NULL>")
            blob("\"desc\"", a.description)
            blob("\"icmt\"", a.comment)
            lines.append("\"invi\"<sint32>=<NULL>")
            lines.append("\"mdat\"<timedate>=" + timedate(a.modified))
            lines.append("\"nega\"<sint32>=<NULL>")
            blob("\"path\"", id.path.isEmpty ? nil : id.path)
            lines.append("\"port\"<uint32>=" + uint32(UInt32(id.port)))
            lines.append("\"prot\"<blob>=<NULL>")
            lines.append("\"ptcl\"<uint32>=" + (id.protocol.map { bytes(Array($0.rawValue.utf8)) } ?? uint32(0)))
            lines.append("\"scrp\"<sint32>=<NULL>")
            blob("\"sdmn\"", id.securityDomain.isEmpty ? nil : id.securityDomain)
            blob("\"srvr\"", id.server)
            lines.append("\"type\"<uint32>=<NULL>")
        }
        return out + lines.map { "    " + $0 + "\n" }.joined()
    }

    /// `password: "…"` (or `password: 0x…` for bytes that are not all printable), as find -g prints it.
    static func passwordLine(_ secret: SecureBytes) -> String {
        secret.withUnsafeBytes { "password: " + bytes(Array($0)) + "\n" }
    }

    /// macOS's print_buffer, byte for byte: a byte is printable when it is ' '...'~' and
    /// not a backslash. Any other byte makes the value `0xHEX` followed by one space, or by
    /// two spaces and the quoted form when some bytes are printable; the quoted form shows
    /// the others as `\ooo` (so a backslash is `\134`; a quote is not escaped). All
    /// printable: only the quoted form. No bytes: nothing.
    static func bytes(_ data: [UInt8]) -> String {
        let printable = data.map { $0 >= 0x20 && $0 <= 0x7e && $0 != 0x5c }
        let hasText = printable.contains(true)
        var out = ""
        if printable.contains(false) {
            out += "0x" + data.map(hexByte).joined() + (hasText ? "  " : " ")
        }
        if hasText {
            out += "\""
            for (byte, isPrintable) in zip(data, printable) {
                out += isPrintable ? String(UnicodeScalar(byte)) : "\\" + octal(byte)
            }
            out += "\""
        }
        return out
    }

    /// A CSSM timedate: "YYYYMMDDhhmmssZ" and a NUL, shown in hex and quoted.
    static func timedate(_ seconds: UInt64) -> String {
        let digits = Timestamp.iso8601(seconds).filter { $0.isNumber } + "Z"
        return bytes(Array(digits.utf8) + [0])
    }

    /// macOS's print_uint32: the big-endian bytes through print_buffer.
    private static func uint32(_ v: UInt32) -> String {
        bytes([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: v >> $0) })
    }

    private static func hexByte(_ b: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String(digits[Int(b >> 4)]) + String(digits[Int(b & 0xF)])
    }

    private static func octal(_ b: UInt8) -> String {
        String(b >> 6) + String((b >> 3) & 7) + String(b & 7)
    }
}
