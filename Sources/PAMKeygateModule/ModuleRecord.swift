// The module's line in root's audit record (GateAuditFile, docs/GATEKEEPER.md "The audit
// record"): the lock at the last close is kept there as the helper keeps it, the same bytes
// but the time: `TIME source=pam_keygate priority=notice message="..."`. The module writes a
// line only when GateAuditFile would write that line whole (ASCII, no cut) and the record needs
// no rotation (record.h); otherwise it writes nothing and the caller leaves the step to
// keygate-pam-helper. PAMSessionCountTests holds the two writers' lines to the same text.
internal import CPAMModule

struct ModuleRecord {
    /// GateAuditFile.maxValueBytes: a longer value is cut and hashed, which is the helper's work.
    static let maxValueBytes = 96

    let fd: Int32
    private let fields: Bytes

    /// The record opened for one line of `priority` holding `message`, or nil when the module
    /// cannot write it as GateAuditFile would (then nothing is opened or written).
    init?(priority: StaticString, message: Bytes) {
        var fields = Bytes()
        fields.append(" source=pam_keygate priority=")
        fields.append(priority)
        fields.append(" message=")
        guard let value = Self.field(message) else { return nil }
        fields.bytes.append(contentsOf: value.bytes)
        fields.append("\n")
        let fd = keygate_open_record(20 + fields.bytes.count)
        guard fd >= 0 else { return nil }
        self.fd = fd
        self.fields = fields
    }

    /// Appends the line with the time now (one write: O_APPEND keeps it whole beside other
    /// writers) and closes the record.
    func write() {
        defer { _ = close(fd) }
        var stamp = [CChar](repeating: 0, count: 32)
        guard keygate_record_time(&stamp) == 0 else { return }
        var line = Bytes()
        for index in 0..<20 { line.bytes.append(UInt8(bitPattern: stamp[index])) }
        line.bytes.append(contentsOf: fields.bytes)
        _ = writeAll(fd, line.bytes)
    }

    /// Closes the record without a line (the step turned out to need none).
    func discard() {
        _ = close(fd)
    }

    /// GateAuditFile.field for ASCII text: quoted when it holds a space, `=`, a quote, a
    /// backslash or an escape; `"` and `\` escaped, control characters as `\xHH`. Nil for
    /// anything else GateAuditFile does (a non-ASCII character, a value it would cut).
    static func field(_ text: Bytes) -> Bytes? {
        var body = Bytes()
        var quoted = text.bytes.isEmpty
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        for byte in text.bytes {
            switch byte {
            case 0x80...: return nil
            case 0x22: body.append("\\\""); quoted = true
            case 0x5C: body.append("\\\\"); quoted = true
            case 0x20, 0x3D: body.bytes.append(byte); quoted = true
            case 0..<0x20, 0x7F:
                body.append("\\x")
                body.bytes.append(hex[Int(byte >> 4)])
                body.bytes.append(hex[Int(byte & 0x0F)])
                quoted = true
            default: body.bytes.append(byte)
            }
            if body.bytes.count > maxValueBytes { return nil }
        }
        guard quoted else { return body }
        var out = Bytes()
        out.append("\"")
        out.bytes.append(contentsOf: body.bytes)
        out.append("\"")
        return out
    }
}
