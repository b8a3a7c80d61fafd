// Memory Keygate allocated itself and keeps out of swap while a secret is in it (mlock(2),
// munlock(2)), and its wiping before release (explicit_bzero(3): never elided as a memset
// before a free may be). SecureBytes has libsodium's; this is for a buffer that must be a C
// string, such as `keygate exec`'s NAME=secret environment entries.
internal import Glibc

package enum LockedPages {
    /// mlock(2) on `count` bytes at `pointer`; false when the limit (ulimit -l) refused it.
    @discardableResult
    package static func lock(_ pointer: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        mlock(pointer, count) == 0
    }

    /// explicit_bzero(3), then munlock(2).
    package static func wipeAndUnlock(_ pointer: UnsafeMutableRawPointer, _ count: Int) {
        explicit_bzero(pointer, count)
        munlock(pointer, count)
    }
}
