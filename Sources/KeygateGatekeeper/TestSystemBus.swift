// Test-hook builds only: the gatekeeper on a private system bus (scripts/fprint-session's,
// named by KEYGATE_TEST_SYSTEM_BUS). DBUS_SYSTEM_BUS_ADDRESS alone is not enough: pam_fprintd
// finds the bus through sd-bus, which reads it with secure_getenv, and a setuid process
// (AT_SECURE) gets nothing from that. So the gatekeeper takes a mount namespace of its own,
// where /run/dbus is an empty tmpfs whose system_bus_socket links to the private bus: the
// path every system-bus client falls back to. Nothing outside this process (and the daemon
// it starts) sees the change. Release builds compile none of it: their hooks name no bus, and
// the mount code is not in the setuid binary at all.
import KeygateAuthentication
import KeygateCore
import KeygateGateWire
internal import CSystem
internal import Glibc

enum TestSystemBus {
    /// Points the system bus at the hooks' bus ("unix:path=/…") inside this process's own mount
    /// namespace; false when there is none or it could not (the gatekeeper then says why in its errors).
    @discardableResult
    static func use(_ hooks: TestHooks) -> Bool {
        #if KEYGATE_TEST_HOOKS
        guard let address = hooks.systemBus else { return false }
        setenv("DBUS_SYSTEM_BUS_ADDRESS", address, 1)
        let prefix = "unix:path="
        guard address.hasPrefix(prefix), geteuid() == 0 else { return false }
        let socket = String(address.dropFirst(prefix.count))
        guard socket.hasPrefix("/"), !socket.contains(",") else { return false }
        guard keygate_unshare_mounts() == 0,
              mount("none", "/", nil, UInt(MS_REC | MS_PRIVATE), nil) == 0 else { return false }
        _ = mkdir("/run/dbus", 0o755)
        guard mount("tmpfs", "/run/dbus", "tmpfs", UInt(MS_NOSUID | MS_NODEV | MS_NOEXEC), "mode=0755,size=64k") == 0 else { return false }
        return symlink(socket, "/run/dbus/system_bus_socket") == 0
        #else
        return false
        #endif
    }
}
