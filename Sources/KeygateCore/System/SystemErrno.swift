// errno as a value (swift-system's Errno): what a failed system call left in errno, its
// strerror(3) text, and names for the codes Keygate's callers tell apart, so that no file
// outside System/ reads errno or calls strerror itself (docs/ARCHITECTURE.md, "One door").
internal import Glibc

/// An errno value from a failed system call.
package struct SystemErrno: Error, Equatable, Sendable {
    package let code: Int32

    package init(code: Int32) { self.code = code }

    /// The errno just set (EIO when a call failed without setting one).
    package static var current: SystemErrno { SystemErrno(code: errno == 0 ? EIO : errno) }

    /// errno exactly as the last call left it, 0 included (`current` turns 0 into EIO).
    package static var last: SystemErrno { SystemErrno(code: errno) }

    package var text: String { String(cString: strerror(code)) }

    /// ENOENT: no such file or folder.
    package static let noEntry = SystemErrno(code: ENOENT)
    /// EEXIST: the file already exists.
    package static let exists = SystemErrno(code: EEXIST)
    /// EACCES: permission denied.
    package static let accessDenied = SystemErrno(code: EACCES)
    /// EPERM: operation not permitted.
    package static let notPermitted = SystemErrno(code: EPERM)
    /// ELOOP: a symbolic link where O_NOFOLLOW refused one (or a loop of them).
    package static let symbolicLink = SystemErrno(code: ELOOP)
    /// ENOTDIR: a path component is not a folder.
    package static let notDirectory = SystemErrno(code: ENOTDIR)
    /// EWOULDBLOCK (EAGAIN): the call would have had to wait.
    package static let wouldBlock = SystemErrno(code: EWOULDBLOCK)
    /// EINTR: a signal cut the call short.
    package static let interrupted = SystemErrno(code: EINTR)
    /// EFBIG: the file is over the size limit (RLIMIT_FSIZE).
    package static let fileTooLarge = SystemErrno(code: EFBIG)
    /// EROFS: a read-only file system.
    package static let readOnlyFileSystem = SystemErrno(code: EROFS)
    /// ENOSPC: no space left on the device.
    package static let noSpace = SystemErrno(code: ENOSPC)
    /// EDQUOT: the disk quota is used up.
    package static let quotaExceeded = SystemErrno(code: EDQUOT)
    /// ETIMEDOUT: the call (or the peer it waited for) timed out.
    package static let timedOut = SystemErrno(code: ETIMEDOUT)
    /// EIO: an input/output error.
    package static let io = SystemErrno(code: EIO)
}
