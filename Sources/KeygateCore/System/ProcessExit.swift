// Ending this process (exit(3): atexit handlers and stdio flushed; `immediately` is _exit(2),
// for a forked child or a process that must run nothing more of its own).
internal import Glibc

package enum ProcessExit {
    package static func now(_ status: Int32) -> Never { exit(status) }

    /// _exit(2) with `status`: no atexit handler, no stdio flush.
    package static func immediately(_ status: Int32) -> Never { _exit(status) }
}
