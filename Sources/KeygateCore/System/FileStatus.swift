// What the kernel says about a file (stat(2), lstat(2), fstat(2), fstatat(2)) as a Swift value:
// its kind, owner, group, mode, size and identity. The one place a `struct stat` is read
// outside SafeFile; a caller checks the fields it needs on the value, never on the path again.
internal import Glibc

package struct FileStatus: Sendable, Equatable {
    package enum Kind: Sendable, Equatable { case regular, directory, symlink, socket, fifo, characterDevice, blockDevice }

    /// The file's type (st_mode & S_IFMT); nil for a type Keygate has no name for.
    package let kind: Kind?
    package let uid: UInt32
    package let gid: UInt32
    /// Permission bits and set-id bits (st_mode & 07777).
    package let mode: UInt32
    package let size: Int
    package let device: UInt64
    package let inode: UInt64
    package let linkCount: UInt64
    /// The last change of contents (st_mtim).
    package let modifiedSeconds: Int
    package let modifiedNanoseconds: Int
    /// The last change of the inode (st_ctim): contents, mode, owner, links or name.
    package let changedSeconds: Int
    package let changedNanoseconds: Int
    /// The whole st_mode, type bits included, as the kernel gave it.
    package let typeAndMode: UInt32

    init(_ info: stat) {
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFDIR: kind = .directory
        case S_IFLNK: kind = .symlink
        case S_IFSOCK: kind = .socket
        case S_IFIFO: kind = .fifo
        case S_IFCHR: kind = .characterDevice
        case S_IFBLK: kind = .blockDevice
        default: kind = nil
        }
        uid = info.st_uid
        gid = info.st_gid
        mode = info.st_mode & 0o7777
        size = Int(info.st_size)
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        linkCount = UInt64(info.st_nlink)
        modifiedSeconds = info.st_mtim.tv_sec
        modifiedNanoseconds = info.st_mtim.tv_nsec
        changedSeconds = info.st_ctim.tv_sec
        changedNanoseconds = info.st_ctim.tv_nsec
        typeAndMode = info.st_mode
    }

    package var isRegular: Bool { kind == .regular }
    package var isDirectory: Bool { kind == .directory }
    package var isSymbolicLink: Bool { kind == .symlink }

    /// `path`'s status: lstat(2) when `links` is `.refuse` (a link is reported as one),
    /// stat(2) when `.follow`.
    package static func of(_ path: String, links: SafeFile.Links) -> Result<FileStatus, SystemErrno> {
        var info = stat()
        let rc = links == .refuse ? lstat(path, &info) : stat(path, &info)
        guard rc == 0 else { return .failure(.current) }
        return .success(FileStatus(info))
    }

    /// `name`'s status relative to the open folder `folder` (fstatat(2); AT_SYMLINK_NOFOLLOW with `.refuse`).
    package static func of(_ name: String, in folder: Int32, links: SafeFile.Links) -> Result<FileStatus, SystemErrno> {
        var info = stat()
        guard fstatat(folder, name, &info, links == .refuse ? AT_SYMLINK_NOFOLLOW : 0) == 0 else { return .failure(.current) }
        return .success(FileStatus(info))
    }

    /// The status of the open file `fd` (fstat(2)).
    package static func of(descriptor fd: Int32) -> Result<FileStatus, SystemErrno> {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .failure(.current) }
        return .success(FileStatus(info))
    }
}
