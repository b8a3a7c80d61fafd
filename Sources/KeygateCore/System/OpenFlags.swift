// open(2)'s flags as a Swift option set, for callers outside System/ that open through
// SafeFile.open: SafeFile adds O_CLOEXEC always and O_NOFOLLOW unless links are allowed, so
// neither is here. `.readOnly` (no flags) is O_RDONLY.
//
// Callers combine flags with `|`, never an array literal: `[.readWrite, .noControllingTerminal]`
// builds an Array<OpenFlags> through SetAlgebra's generic initialiser, whose metadata the
// runtime instantiates from its mangled name the first time, about 200,000 instructions in a
// process that opens one file (callgrind of a gated read, whose TerminalPrompter.isAvailable
// opens /dev/tty; docs/PERFORMANCE.md).
internal import Glibc

package struct OpenFlags: OptionSet, Sendable {
    package let rawValue: Int32
    package init(rawValue: Int32) { self.rawValue = rawValue }

    /// O_RDONLY: no flags.
    package static let readOnly = OpenFlags()
    package static let writeOnly = OpenFlags(rawValue: O_WRONLY)
    package static let readWrite = OpenFlags(rawValue: O_RDWR)
    /// O_CREAT: create the file (with the mode given) when missing.
    package static let create = OpenFlags(rawValue: O_CREAT)
    /// O_EXCL: with `create`, fail with EEXIST when the file exists.
    package static let exclusive = OpenFlags(rawValue: O_EXCL)
    /// O_APPEND: every write at the end.
    package static let append = OpenFlags(rawValue: O_APPEND)
    package static let truncate = OpenFlags(rawValue: O_TRUNC)
    /// O_NONBLOCK: never block on a FIFO (or a terminal's read).
    package static let nonBlocking = OpenFlags(rawValue: O_NONBLOCK)
    /// O_NOCTTY: a terminal opened does not become the controlling one.
    package static let noControllingTerminal = OpenFlags(rawValue: O_NOCTTY)
    /// O_DIRECTORY: fail unless it is a folder.
    package static let directory = OpenFlags(rawValue: O_DIRECTORY)

    /// Both sets of flags, without an array (see above).
    package static func | (lhs: OpenFlags, rhs: OpenFlags) -> OpenFlags {
        OpenFlags(rawValue: lhs.rawValue | rhs.rawValue)
    }
}

extension SafeFile {
    /// A descriptor on `path` opened with `flags` (see openDescriptor: O_CLOEXEC always, O_NOFOLLOW
    /// when `links` is `.refuse`, EINTR retried), or -1 with errno set.
    package static func open(_ path: String, _ flags: OpenFlags, mode: UInt32 = 0, links: Links = .refuse,
                             in folder: Int32 = AT_FDCWD) -> Int32 {
        openDescriptor(path, flags.rawValue, mode: mode, links: links, in: folder)
    }
}
