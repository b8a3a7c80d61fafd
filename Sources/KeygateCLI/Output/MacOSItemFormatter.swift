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
    static func keychainPath(_ environment: KeygateEnvironment) -> String {
        if let xdg = environment.dataHome, xdg.hasPrefix("/") { return xdg + "/keygate" }
        return (environment.home ?? "") + "/.local/share/keygate"
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

    /// Writes `prefix`, the secret as print_buffer shows it, and a newline to `fd`: find -g's
    /// `password: "…"` on stderr, dump-keychain -d's `data:` value. The formatted bytes go
    /// straight into locked memory (SecureBytes), never into a String.
    static func writeSecret(_ secret: SecureBytes, prefix: String, toFileDescriptor fd: Int32) throws {
        var line = Array(prefix.utf8)
        secret.withUnsafeBytes { render($0, into: &line) }
        line.append(0x0A)
        let locked = try SecureBytes(consuming: &line)
        try locked.write(toFileDescriptor: fd)
    }

    /// macOS's print_buffer, byte for byte: a byte is printable when it is ' '...'~' and
    /// not a backslash. Any other byte makes the value `0xHEX` followed by one space, or by
    /// two spaces and the quoted form when some bytes are printable; the quoted form shows
    /// the others as `\ooo` (so a backslash is `\134`; a quote is not escaped). All
    /// printable: only the quoted form. No bytes: nothing.
    static func bytes(_ data: [UInt8]) -> String {
        var out: [UInt8] = []
        render(data, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// print_buffer into `out`, without an intermediate copy of `data`.
    static func render<Bytes: Collection>(_ data: Bytes, into out: inout [UInt8]) where Bytes.Element == UInt8 {
        func isPrintable(_ b: UInt8) -> Bool { b >= 0x20 && b <= 0x7e && b != 0x5c }
        let hasText = data.contains(where: isPrintable)
        let hex = Array("0123456789ABCDEF".utf8)
        if data.contains(where: { !isPrintable($0) }) {
            out += Array("0x".utf8)
            for b in data { out.append(hex[Int(b >> 4)]); out.append(hex[Int(b & 0xF)]) }
            out += hasText ? [0x20, 0x20] : [0x20]
        }
        guard hasText else { return }
        out.append(0x22)
        for b in data {
            if isPrintable(b) {
                out.append(b)
            } else {
                out += [0x5C, 0x30 + (b >> 6), 0x30 + ((b >> 3) & 7), 0x30 + (b & 7)]
            }
        }
        out.append(0x22)
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

}
