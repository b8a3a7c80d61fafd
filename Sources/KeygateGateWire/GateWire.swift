// The gatekeeper's framing (docs/GATEKEEPER.md): the client and keygate-gatekeeper talk
// over two pipes in frames of a big-endian u32 length and that many bytes (at most
// `maxFrame`); the first byte of a frame says what it is. ByteWriter and ByteReader
// encode the fields inside a frame; the reader never traps on short or hostile input.
import KeygateCore

package enum GateWire {
    /// The largest frame either side accepts: a request carries at most 17 boxes of 89 bytes,
    /// a reason and an identity (each capped), far below this.
    package static let maxFrame = 16 * 1024

    /// Writes one frame; false when the other side is gone.
    package static func writeFrame(_ fd: Int32, _ payload: [UInt8]) -> Bool {
        guard payload.count <= maxFrame else { return false }
        let n = UInt32(payload.count)
        var bytes = [UInt8(n >> 24), UInt8((n >> 16) & 0xff), UInt8((n >> 8) & 0xff), UInt8(n & 0xff)] + payload
        defer { Sodium.wipe(&bytes) }
        return SafeFile.writeAll(fd, bytes) == nil
    }

    /// Reads one frame; nil at end of input, on an oversize length, or on an error.
    package static func readFrame(_ fd: Int32) -> [UInt8]? {
        readFrame(fd, deadline: nil)
    }

    /// Reads one frame that must arrive whole within `milliseconds` (a socket peer that
    /// trickles bytes cannot hold the reader longer); nil at the deadline, as at end of input.
    package static func readFrame(_ fd: Int32, withinMilliseconds milliseconds: Int) -> [UInt8]? {
        readFrame(fd, deadline: MonotonicClock.milliseconds + milliseconds)
    }

    private static func readFrame(_ fd: Int32, deadline: Int?) -> [UInt8]? {
        guard let head = Descriptor.readExactly(fd, 4, deadline: deadline) else { return nil }
        let n = Int(head[0]) << 24 | Int(head[1]) << 16 | Int(head[2]) << 8 | Int(head[3])
        guard n <= maxFrame else { return nil }
        return n == 0 ? [] : Descriptor.readExactly(fd, n, deadline: deadline)
    }
}

extension GateWire {
    /// The longest prefix of `text` of at most `maxBytes` UTF-8 bytes that ends on a character
    /// boundary (a cut inside a character would decode as U+FFFD, longer than the cap).
    package static func prefix(_ text: String, maxBytes: Int) -> String {
        guard text.utf8.count > maxBytes else { return text }
        var out = ""
        var used = 0
        for scalar in text.unicodeScalars {
            let length = String(scalar).utf8.count
            guard used + length <= maxBytes else { break }
            out.unicodeScalars.append(scalar)
            used += length
        }
        return out
    }
}

/// Appends big-endian fields to a frame.
package struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    package mutating func u8(_ v: UInt8) { bytes.append(v) }
    package mutating func u16(_ v: UInt16) { bytes += [UInt8(v >> 8), UInt8(v & 0xff)] }
    package mutating func u32(_ v: UInt32) {
        bytes += [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
    }
    package mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    package mutating func u64(_ v: UInt64) { u32(UInt32(v >> 32)); u32(UInt32(v & 0xffff_ffff)) }
    package mutating func raw(_ v: [UInt8]) { bytes += v }
    /// A string of at most 65535 bytes (longer ones are cut: callers cap them first).
    package mutating func string(_ s: String) { short(Array(s.utf8)) }
    /// Bytes prefixed with a u16 length.
    package mutating func short(_ v: [UInt8]) {
        let cut = Array(v.prefix(Int(UInt16.max)))
        u16(UInt16(cut.count))
        bytes += cut
    }
    /// Bytes prefixed with a u8 length (at most 255).
    package mutating func tiny(_ v: [UInt8]) {
        let cut = Array(v.prefix(255))
        u8(UInt8(cut.count))
        bytes += cut
    }
    /// Wipes what was written (frames may carry shares and passwords).
    package mutating func wipe() { Sodium.wipe(&bytes) }
}

/// Reads big-endian fields from a frame; every read checks the length first.
package struct ByteReader {
    private let bytes: [UInt8]
    private(set) var offset = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    package var isAtEnd: Bool { offset == bytes.count }

    package mutating func u8() throws -> UInt8 { try take(1)[0] }
    package mutating func u16() throws -> UInt16 {
        let b = try take(2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }
    package mutating func u32() throws -> UInt32 {
        let b = try take(4)
        return UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
    }
    package mutating func i32() throws -> Int32 { Int32(bitPattern: try u32()) }
    package mutating func u64() throws -> UInt64 { UInt64(try u32()) << 32 | UInt64(try u32()) }
    package mutating func raw(_ count: Int) throws -> [UInt8] { try take(count) }
    package mutating func short() throws -> [UInt8] { try take(Int(try u16())) }
    package mutating func tiny() throws -> [UInt8] { try take(Int(try u8())) }
    /// A UTF-8 string of at most `max` bytes.
    package mutating func string(max: Int) throws -> String {
        let b = try short()
        guard b.count <= max else { throw GateWireError.malformed("a text field of \(b.count) bytes, more than \(max)") }
        guard let s = String(validating: b, as: UTF8.self), !s.utf8.contains(0) else {
            throw GateWireError.malformed("a text field that is not UTF-8")
        }
        return s
    }

    private mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else {
            throw GateWireError.malformed("the frame ends \(count) bytes early")
        }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}

/// Why a frame was refused. Never carries the frame's bytes.
package enum GateWireError: Error, Equatable {
    case malformed(String)
}
