// The module's log: pam_syslog lines ("pam_keygate(sshd:session): ..."), with debug
// lines only under the `debug` option. Messages are built lazily and never carry a
// secret. Delegates to keygate_pam_syslog, the non-variadic wrapper in CPAM's shim.
internal import CPAM

struct ModuleLog {
    let handle: OpaquePointer
    let debugEnabled: Bool

    func error(_ message: @autoclosure () -> String) { write(LOG_ERR, message()) }
    func warning(_ message: @autoclosure () -> String) { write(LOG_WARNING, message()) }
    func notice(_ message: @autoclosure () -> String) { write(LOG_NOTICE, message()) }

    func debug(_ message: @autoclosure () -> String) {
        guard debugEnabled else { return }
        write(LOG_DEBUG, message())
    }

    private func write(_ priority: Int32, _ message: String) {
        keygate_pam_syslog(handle, priority, message)
    }
}
