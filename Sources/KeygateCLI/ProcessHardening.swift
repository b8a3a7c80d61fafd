// Keeps secrets out of core dumps: RLIMIT_CORE 0 and PR_SET_DUMPABLE 0 (which also
// stops other processes of the same user from attaching with ptrace or reading
// /proc/PID/mem), through KeygateCore/System/CoreDumps. Locked memory from libsodium is
// excluded from dumps as well.
import Keygate

public enum ProcessHardening {
    public static func apply() {
        CoreDumps.disable()
    }
}
