// The resource limits and nice value a root program runs with, as the gatekeeper's C start
// (Sources/CGatekeeperStart) sets them against a caller's (FSIZE, AS, DATA, CPU unlimited,
// STACK 8 MiB, NOFILE 1024/4096, nice 0), and whether they are root's: where the start could
// not raise them (no CAP_SYS_RESOURCE, as in a container), the caller's are still on the process.
internal import Glibc

package enum ResourceLimits {
    /// True when the file-size limit is unlimited and 1024 files may be open: not a caller's limits.
    package static var areRoots: Bool {
        var size = rlimit(), files = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &size) == 0,
              getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0 else { return false }
        return size.rlim_cur == rlim_t.max && files.rlim_cur >= 1024
    }

    /// Sets them again, as the C start did, for a program this one starts (a spawn keeps them).
    /// Best effort: a limit that cannot be set stays as the start left it, which `areRoots` checked.
    package static func resetForAChild() {
        var files = rlimit(rlim_cur: 1024, rlim_max: 4096)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files)
        for resource in [RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_AS, RLIMIT_DATA, RLIMIT_STACK] {
            var unlimited = rlimit(rlim_cur: rlim_t.max, rlim_max: rlim_t.max)
            if resource == RLIMIT_STACK { unlimited.rlim_cur = 8 * 1024 * 1024 }
            _ = setrlimit(__rlimit_resource_t(resource.rawValue), &unlimited)
        }
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 0)
    }
}
