// Unnamed files (O_TMPFILE): made in a folder with no name, written, then named with linkat.
// SafeFile.replace writes through one, so that a writer stopped halfway (killed, out of
// space, over its file-size limit) leaves nothing in the folder. The C calls are CSystem's
// (O_TMPFILE and AT_EMPTY_PATH are macros Swift does not import).
internal import CSystem

enum UnnamedFile {
    /// An unnamed file in `dirfd`, open for writing, or -1 where the file system has none.
    static func open(in dirfd: Int32, mode: UInt32) -> Int32 {
        keygate_open_tmpfile(dirfd, mode)
    }

    /// Names it `name` in `dirfd`; false with errno (EEXIST when `name` exists).
    static func link(_ fd: Int32, in dirfd: Int32, as name: String) -> Bool {
        keygate_link_unnamed(fd, dirfd, name) == 0
    }
}
