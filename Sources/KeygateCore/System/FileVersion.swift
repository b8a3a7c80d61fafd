// What the kernel says of a file, enough to tell that it changed: device, inode, size,
// owner, mode, and modification and change times to the nanosecond. A write, a chmod, a
// chown and a rename over it all change one of them, and nobody can set the change time.
// Long-running caches (the gatekeeper's daemon) keep what they read from a file only while
// its version stays the same.
internal import Glibc

package struct FileVersion: Equatable, Sendable {
    var device: UInt64, inode: UInt64, size: Int64, owner: UInt32, mode: UInt32
    var modified: [Int], changed: [Int]

    init(_ info: stat) {
        device = UInt64(info.st_dev); inode = UInt64(info.st_ino); size = Int64(info.st_size)
        owner = info.st_uid; mode = info.st_mode
        modified = [info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
        changed = [info.st_ctim.tv_sec, info.st_ctim.tv_nsec]
    }

    /// The version of the file at `path` (links followed), or nil when it cannot be stat'ed.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }
}
