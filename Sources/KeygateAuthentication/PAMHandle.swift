// Owns one pam_handle_t: pam_start_confdir in init, pam_end in deinit, and one
// method per PAM call used by Keygate, so the C names appear in one place. It keeps
// the conversation object alive as long as PAM may call it. Delegates to CPAM, which loads
// libpam on first use (kg_pam_*): a library that cannot be loaded is notAvailable, with advice.
import KeygateCore
internal import CPAM

final class PAMHandle {
    private let handle: OpaquePointer
    private let conversation: PAMConversation
    /// The last status, passed to pam_end as PAM asks.
    private var lastStatus: Int32 = PAM_SUCCESS

    /// The C function is `pam_start_confdir(3)`; a nil confdir means the system's /etc/pam.d.
    init(service: String, user: String, conversation: PAMConversation, confdir: String?) throws {
        self.conversation = conversation
        var conv = conversation.cStruct  // pam_start copies the struct
        if let why = kg_pam_load_error() {
            throw KeychainError.notAvailable(
                "\(String(cString: why)): PAM is needed to check the password; install libpam0g (apt-get install libpam0g)")
        }
        var raw: OpaquePointer?
        let status = kg_pam_start_confdir(service, user, &conv, confdir, &raw)
        guard status == PAM_SUCCESS, let raw else {
            if let raw { kg_pam_end(raw, status) }
            throw KeychainError.notAvailable(
                "PAM could not start service '\(service)' (status \(status)): check /etc/pam.d/\(service) and the system log")
        }
        handle = raw
    }

    /// `pam_authenticate(3)`.
    func authenticate() -> Int32 {
        lastStatus = kg_pam_authenticate(handle, 0)
        return lastStatus
    }

    /// `pam_acct_mgmt(3)`.
    func accountManagement() -> Int32 {
        lastStatus = kg_pam_acct_mgmt(handle, 0)
        return lastStatus
    }

    /// `pam_strerror(3)`: PAM's own words for a status.
    func describe(_ status: Int32) -> String {
        guard let text = kg_pam_strerror(handle, status) else { return "PAM status \(status)" }
        return String(cString: text)
    }

    deinit {
        kg_pam_end(handle, lastStatus)
    }
}
