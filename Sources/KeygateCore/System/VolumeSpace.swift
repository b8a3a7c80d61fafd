// The free space and read-only flag of the file system that holds a path (statvfs(3)), for
// keygate doctor's disk check.
internal import Glibc

package struct VolumeSpace: Sendable, Equatable {
    /// Bytes an unprivileged user may still write (f_bavail * f_frsize).
    package let availableBytes: UInt64
    /// Mounted read-only (ST_RDONLY).
    package let isReadOnly: Bool

    /// statvfs(3) of `path`.
    package static func of(_ path: String) -> Result<VolumeSpace, SystemErrno> {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return .failure(.current) }
        return .success(VolumeSpace(availableBytes: UInt64(info.f_bavail) * UInt64(info.f_frsize),
                                    isReadOnly: info.f_flag & UInt(ST_RDONLY) != 0))
    }
}
