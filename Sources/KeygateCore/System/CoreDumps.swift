// Keeps a process's memory out of core dumps and away from same-user debuggers: RLIMIT_CORE 0
// (setrlimit(2)) and PR_SET_DUMPABLE 0 (prctl(2), through CSystem's non-variadic wrapper),
// which also stops other processes of the same user from attaching with ptrace or reading
// /proc/PID/mem. Called first by the keygate executable (ProcessHardening).
internal import CSystem
internal import Glibc

package enum CoreDumps {
    package static func disable() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = keygate_set_nondumpable()
    }
}
