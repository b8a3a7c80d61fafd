// One field of /proc/PID/status that /proc/PID/stat does not carry: NSpid, the process's pid
// in each pid namespace it is in, outermost first. Its last value is the pid the process has
// in its own namespace: 1 for the init of a namespace (a container's first process), which the
// kernel makes the adopter of that namespace's orphans (CallerScope never anchors on one).
internal import Glibc

package enum ProcStatus {
    /// The pid `pid` has in its own pid namespace, or nil when /proc cannot tell.
    package static func namespacePID(of pid: Int32) -> Int32? {
        let fd = SafeFile.openDescriptor("/proc/\(pid)/status", O_RDONLY, links: .follow)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        guard case .success(let count) = buffer.withUnsafeMutableBytes({ SafeFile.readFully(fd, into: $0) }) else { return nil }
        return namespacePID(statusText: buffer[0..<count])
    }

    /// The last number of the "NSpid:" line of a status file's bytes.
    package static func namespacePID(statusText bytes: ArraySlice<UInt8>) -> Int32? {
        let key = Array("\nNSpid:".utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: key) }) else { return nil }
        let line = bytes[(start + key.count)...].prefix { $0 != UInt8(ascii: "\n") }
        let last = line.split(whereSeparator: { $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: " ") }).last
        return last.flatMap { Int32(String(decoding: $0, as: UTF8.self)) }
    }
}
