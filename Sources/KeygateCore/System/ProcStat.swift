// /proc/PID/stat, read and split once for everyone: the reuse scope of the calling process
// (ReuseScope) and the gatekeeper's view of its caller (CallerScope). The command name
// (field 2) is in parentheses and may itself hold spaces and parentheses, so fields are
// counted after the last ')'.
internal import Glibc

/// The fields of /proc/PID/stat Keygate uses.
package struct ProcStat: Equatable {
    package var parent: Int32
    package var session: Int32
    package var ttyNumber: Int64
    /// Field 22: start time in clock ticks after boot.
    package var startTime: UInt64

    /// The fields of process `pid`, parsed from the bytes (the gatekeeper's daemon reads a few per
    /// request: no String is made).
    package static func read(pid: Int32) -> ProcStat? {
        bytes(of: "\(pid)").flatMap { parse(bytes: $0[...]) }
    }

    /// The stat line of `process` ("self" or a pid), or nil when /proc cannot be read.
    static func line(of process: String) -> String? {
        bytes(of: process).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func bytes(of process: String) -> [UInt8]? {
        let fd = SafeFile.openDescriptor("/proc/\(process)/stat", O_RDONLY, links: .follow)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        // The kernel hands the whole line over in one read: the newline ends it.
        guard case .success(let count) = buffer.withUnsafeMutableBytes({
            SafeFile.readFully(fd, into: $0, endingAt: UInt8(ascii: "\n"))
        }) else { return nil }
        return count > 0 ? Array(buffer[0..<count]) : nil
    }

    /// Fields 3 onwards of a stat line (field k is at index k - 3), or nil without a ')'.
    static func fields(_ line: String) -> [Substring]? {
        guard let close = line.lastIndex(of: ")") else { return nil }
        return line[line.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    static func parse(_ line: String) -> ProcStat? {
        parse(bytes: Array(line.utf8)[...])
    }

    /// Fields 4 (parent), 6 (session), 7 (tty) and 22 (start time), counted after the last ')'.
    static func parse(bytes: ArraySlice<UInt8>) -> ProcStat? {
        guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var numbers: [Int64] = []
        numbers.reserveCapacity(20)
        var field = 2
        var value: Int64 = 0, negative = false, digits = 0, valid = true
        for byte in bytes[(close + 1)...] + [UInt8(ascii: " ")] {
            if byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") {
                if digits > 0 || !valid {
                    field += 1
                    if [4, 6, 7, 22].contains(field) {
                        guard valid, digits > 0 else { return nil }
                        numbers.append(negative ? -value : value)
                        if field == 22 { break }
                    }
                }
                value = 0; negative = false; digits = 0; valid = true
            } else if byte == UInt8(ascii: "-"), digits == 0, !negative {
                negative = true
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 18 {
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
            } else {
                valid = false   // field 3 (state) is a letter; the fields kept must be numbers
            }
        }
        guard numbers.count == 4, let parent = Int32(exactly: numbers[0]), let session = Int32(exactly: numbers[1]),
              numbers[3] >= 0 else { return nil }
        return ProcStat(parent: parent, session: session, ttyNumber: numbers[2], startTime: UInt64(numbers[3]))
    }
}
