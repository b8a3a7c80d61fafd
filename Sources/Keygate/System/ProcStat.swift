// /proc/PID/stat, read and split once for everyone: the reuse scope of the calling process
// (ReuseScope) and the gatekeeper's view of its caller (CallerScope). The command name
// (field 2) is in parentheses and may itself hold spaces and parentheses, so fields are
// counted after the last ')'.
internal import Glibc

/// The fields of /proc/PID/stat Keygate uses.
package struct ProcStat: Equatable {
    var parent: Int32
    var session: Int32
    var ttyNumber: Int64
    /// Field 22: start time in clock ticks after boot.
    package var startTime: UInt64

    package static func read(pid: Int32) -> ProcStat? {
        line(of: "\(pid)").flatMap(parse)
    }

    /// The stat line of `process` ("self" or a pid), or nil when /proc cannot be read.
    static func line(of process: String) -> String? {
        let fd = open("/proc/\(process)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var count = 0
        while count < buffer.count {
            let n = buffer.withUnsafeMutableBytes { raw in
                Glibc.read(fd, raw.baseAddress.map { $0 + count }, raw.count - count)
            }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { break }
            count += n
        }
        return count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : nil
    }

    /// Fields 3 onwards of a stat line (field k is at index k - 3), or nil without a ')'.
    static func fields(_ line: String) -> [Substring]? {
        guard let close = line.lastIndex(of: ")") else { return nil }
        return line[line.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    static func parse(_ line: String) -> ProcStat? {
        guard let rest = fields(line), rest.count > 19, let parent = Int32(rest[1]), let session = Int32(rest[3]),
              let tty = Int64(rest[4]), let start = UInt64(rest[19]) else { return nil }
        return ProcStat(parent: parent, session: session, ttyNumber: tty, startTime: start)
    }
}
