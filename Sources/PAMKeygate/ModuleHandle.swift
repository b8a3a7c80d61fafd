// The pam_handle_t a PAM entry point receives, with one method per libpam call the
// module makes, so the C names appear in one place: the user, the typed passwords
// (PAM items, never prompted for) and the one line of text the module may show.
// Delegates to CPAM.
internal import CPAM
internal import Glibc
#if !KEYGATE_PAM_STANDALONE
import Keygate
#endif

struct ModuleHandle {
    let raw: OpaquePointer

    /// Module data name of the password captured for `user`: per user, so that a tool
    /// that authenticates one user and opens a session for another (sudo) never tries
    /// one user's password on another's keychain.
    static func passwordDataName(_ user: String) -> String { "keygate.password." + user }

    /// PAM_USER, as set by the application or an earlier module (never prompted for).
    func user() -> String? {
        guard let pointer = item(PAM_USER) else { return nil }
        return String(validatingCString: pointer.assumingMemoryBound(to: CChar.self))
    }

    /// PAM_TTY: the terminal ("/dev/pts/3", "tty1"), sshd's "ssh", an X display (":0"), or what a
    /// service without one sets ("cron"); nil when unset.
    func tty() -> String? {
        guard let pointer = item(PAM_TTY) else { return nil }
        return String(cString: pointer.assumingMemoryBound(to: CChar.self))
    }

    /// A session a person logs in to (a terminal, ssh, a display), not a job (cron, a service).
    func isInteractiveSession() -> Bool {
        guard let tty = tty() else { return false }
        return tty.hasPrefix("/dev/") || tty.hasPrefix("tty") || tty.hasPrefix("pts/") || tty == "ssh" || tty.hasPrefix(":")
    }

    /// PAM_SERVICE, for log lines.
    func service() -> String {
        guard let pointer = item(PAM_SERVICE) else { return "?" }
        return String(validatingCString: pointer.assumingMemoryBound(to: CChar.self)) ?? "?"
    }

    /// A copy in locked memory of PAM_AUTHTOK or PAM_OLDAUTHTOK, as an earlier module
    /// (pam_unix) left it; nil when unset or empty. The module never prompts itself.
    func password(_ which: Int32) throws -> SecureBytes? {
        guard let pointer = item(which) else { return nil }
        let length = strnlen(pointer.assumingMemoryBound(to: CChar.self), Self.maxPasswordBytes)
        guard length > 0 else { return nil }
        return try SecureBytes(copying: UnsafeRawBufferPointer(start: pointer, count: length))
    }

    /// One PAM_TEXT_INFO line through the application's conversation (pam_info(3)), as
    /// pam_echo or sudo's lecture would: never a secret. Best effort.
    func info(_ text: String) {
        _ = keygate_pam_info(raw, text)
    }

    /// `pam_get_item(3)`: a pointer owned by PAM, or nil.
    private func item(_ type: Int32) -> UnsafeRawPointer? {
        var value: UnsafeRawPointer?
        guard pam_get_item(raw, type, &value) == PAM_SUCCESS else { return nil }
        return value
    }

    /// PAM itself refuses longer passwords (PAM_MAX_RESP_SIZE is 512).
    static let maxPasswordBytes = 4096
}
