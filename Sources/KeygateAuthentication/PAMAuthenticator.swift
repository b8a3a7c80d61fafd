// Authenticates a user through PAM the way sudo does: pam_authenticate, up to
// maxTries attempts with "Sorry, try again." in between, then pam_acct_mgmt. It
// returns the password typed in the successful conversation (locked memory) so the
// caller can unwrap keys with it. Delegates prompting to a Prompter, the C calls to
// PAMHandle and the conversation to PAMConversation. PAM's fail delay is left alone.
import KeygateCore
internal import CPAM

package struct PAMAuthenticator {
    let service: String
    let user: String
    /// A folder of PAM service files used instead of /etc/pam.d (tests only: release
    /// builds ignore it, so no caller can swap in a permissive stack).
    let confdir: String?

    package init(service: String, user: String, confdir: String? = nil) {
        self.service = service
        self.user = user
        self.confdir = TestHooks.compiledIn ? confdir : nil
    }

    /// What the stack checks, for the words of a failure.
    package enum Credential: Sendable {
        case password
        /// A fingerprint (pam_fprintd): each pam_authenticate is one scan, counted by `attempts`
        /// before it, like a typed answer.
        case fingerprint
    }

    /// Authenticates `user` through PAM (pam_authenticate then pam_acct_mgmt), at most maxTries attempts.
    /// Returns the last PAM_PROMPT_ECHO_OFF answer of the successful conversation, in locked memory;
    /// it is empty when the PAM stack let the user in without asking for a password.
    /// `reason` is shown in the prompt, like Apple's localizedReason.
    /// `attempts` counts each attempt before PAM runs and hears how it ended (AttemptCounter);
    /// it may throw to refuse an attempt or to stop after a failure (the lockout does).
    package func authenticate(prompter: any Prompter, reason: String?, maxTries: Int,
                              attempts: any AttemptCounter = UncountedAttempts(),
                              credential: Credential = .password) throws -> SecureBytes {
        try validateNames()
        try prompter.ensureAvailable()
        try checkServiceInstalled()

        let conversation = PAMConversation(prompter: prompter, user: user, reason: reason)
        let handle = try PAMHandle(service: service, user: user, conversation: conversation, confdir: confdir)
        let tries = max(1, maxTries)
        for attempt in 1...tries {
            try attempts.begin()
            conversation.beginAttempt()
            let status = handle.authenticate()
            if conversation.canceled || conversation.failure != nil, !conversation.answered { attempts.unanswered() }
            if conversation.canceled {
                throw KeychainError.userCanceled("authentication for \(user) was canceled: nothing was unlocked")
            }
            if let failure = conversation.failure { throw failure }
            switch status {
            case PAM_SUCCESS:
                try checkAccount(handle)
                try attempts.succeeded()
                return try conversation.password ?? SecureBytes(count: 0)
            case PAM_AUTH_ERR, PAM_CRED_INSUFFICIENT:
                try attempts.failed()
                if attempt < tries { prompter.notify("Sorry, try again.") }
            case PAM_MAXTRIES:
                // pam_unix counts failures per handle and says "no more" on its own limit.
                try attempts.failed()
                throw KeychainError.authFailed(Self.incorrectAttempts(attempt, user: user, credential))
            case PAM_AUTHINFO_UNAVAIL where credential == .fingerprint:
                // pam_fprintd's scan timed out ("Verification timed out"): no finger, so no guess.
                attempts.unanswered()
                throw KeychainError.authFailed("""
                    no finger was placed on the fingerprint reader in time for \(user): nothing was unlocked; try again and touch \
                    the reader when asked
                    """)
            default:
                if !conversation.answered { attempts.unanswered() }
                throw error(for: status, handle: handle, during: "authentication")
            }
        }
        throw KeychainError.authFailed(Self.incorrectAttempts(tries, user: user, credential))
    }

    /// sudo's wording: "3 incorrect password attempts for alice"; "1 failed fingerprint match for alice".
    static func incorrectAttempts(_ count: Int, user: String, _ credential: Credential = .password) -> String {
        switch credential {
        case .password: return (count == 1 ? "1 incorrect password attempt" : "\(count) incorrect password attempts") + " for \(user)"
        case .fingerprint: return (count == 1 ? "1 failed fingerprint match" : "\(count) failed fingerprint matches") + " for \(user)"
        }
    }

    private func checkAccount(_ handle: PAMHandle) throws {
        let status = handle.accountManagement()
        switch status {
        case PAM_SUCCESS:
            return
        case PAM_NEW_AUTHTOK_REQD:
            throw KeychainError.authFailed("the password of \(user) has expired: change it with `passwd`, then try again")
        case PAM_ACCT_EXPIRED:
            throw KeychainError.authFailed("the account \(user) has expired: ask an administrator to renew it")
        case PAM_PERM_DENIED, PAM_AUTH_ERR:
            throw KeychainError.authFailed(
                "PAM service '\(service)' does not let \(user) in (\(handle.describe(status))): ask an administrator to check the account")
        default:
            throw error(for: status, handle: handle, during: "the account check")
        }
    }

    /// The error for a PAM status other than success or a wrong password.
    private func error(for status: Int32, handle: PAMHandle, during step: String) -> KeychainError {
        let words = handle.describe(status)
        switch status {
        case PAM_USER_UNKNOWN:
            return .authFailed("PAM does not know the user '\(user)' (service '\(service)'): check the user name")
        case PAM_MAXTRIES:
            return .authFailed("PAM refused more attempts for \(user) (\(words)): wait a while, then try again")
        case PAM_AUTHINFO_UNAVAIL:
            return .notAvailable(
                """
                    PAM service '\(service)' cannot reach its authentication information (\(words)): check the stack in \
                    /etc/pam.d/\(service) and the system log
                    """)
        case PAM_CONV_ERR:
            return .notAvailable(
                "PAM service '\(service)' asked something Keygate cannot answer (\(words)): check /etc/pam.d/\(service)")
        default:
            // PAM_ABORT, PAM_SYSTEM_ERR, PAM_SERVICE_ERR, PAM_BUF_ERR, and anything new.
            return .notAvailable(
                "PAM service '\(service)' failed during \(step) (\(words)): check /etc/pam.d/\(service) and the system log (journalctl)")
        }
    }

    private func validateNames() throws {
        guard !service.isEmpty, !service.contains("/"), service != "." && service != ".." else {
            throw KeychainError.param("'\(service)' is not a PAM service name: use a file name from /etc/pam.d, such as keygate")
        }
        guard !user.isEmpty else {
            throw KeychainError.param("no user name to authenticate: pass the account's login name")
        }
    }

    /// Linux-PAM quietly falls back to the 'other' service when a service file is
    /// missing, which would authenticate through a stack nobody chose. Refuse instead.
    private func checkServiceInstalled() throws {
        if let confdir {
            guard Self.fileExists(confdir + "/" + service) else {
                throw KeychainError.notAvailable(
                    "PAM service '\(service)' is not installed in \(confdir): add the service file \(confdir)/\(service)")
            }
            return
        }
        // Systems configured by /etc/pam.conf alone have no /etc/pam.d: let PAM decide there.
        guard Self.isDirectory("/etc/pam.d") else { return }
        let installed = ["/etc/pam.d", "/usr/lib/pam.d", "/usr/share/pam.d"].contains { Self.fileExists($0 + "/" + service) }
        guard installed else {
            throw KeychainError.notAvailable(
                "PAM service '\(service)' is not installed: run `make install` or copy pam.d/\(service) to /etc/pam.d/")
        }
    }

    private static func fileExists(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow) else { return false }
        return info.isRegular
    }

    private static func isDirectory(_ path: String) -> Bool {
        guard case .success(let info) = FileStatus.of(path, links: .follow) else { return false }
        return info.isDirectory
    }
}
