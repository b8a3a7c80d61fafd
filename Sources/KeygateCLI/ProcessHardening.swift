// Keeps secrets out of core dumps: RLIMIT_CORE 0 and PR_SET_DUMPABLE 0 (which also
// stops other processes of the same user from attaching with ptrace or reading
// /proc/PID/mem). Locked memory from libsodium is excluded from dumps as well.
import Glibc
internal import CSystem

public enum ProcessHardening {
    public static func apply() {
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        _ = setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        _ = keygate_set_nondumpable()
    }
}
