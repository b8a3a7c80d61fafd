// The audit trail: authentication successes, failures and lockouts, unlocks, locks
// and policy refusals, one line each to syslog (facility authpriv, so the journal or
// /var/log/auth.log keeps them), with the user, the PAM service, the item, the scope
// and the reason; never a secret. A process-wide switch (the CLI's --verbose) also
// prints each line on stderr. Delegates to syslog(3) through CSystem's wrappers.
internal import CSystem
internal import Glibc
import Synchronization

/// What happened.
public enum AuditEvent: String, Sendable, CaseIterable {
    case authSuccess = "auth-success"
    case authFailure = "auth-failure"
    case lockout = "lockout"
    case unlock = "unlock"
    case lock = "lock"
    case policyRefusal = "policy-refusal"

    /// Failures, lockouts and refusals are warnings; the rest notices.
    var isWarning: Bool { self == .authFailure || self == .lockout || self == .policyRefusal }
}

/// One audit line's fields. Only names, never a secret: there is no field for one.
public struct AuditRecord: Sendable, Equatable {
    public var event: AuditEvent
    public var user: String
    /// The PAM service that authenticated (keygate, keygate-passcode …), when one did.
    public var pamService: String?
    /// The item's service and account, when the event concerns one item.
    public var itemService: String?
    public var account: String?
    /// The reuse scope id (tty.…, session.…, ppid.…, global).
    public var scope: String?
    /// The reason shown in the prompt (the policy's prompt or the caller's localizedReason).
    public var reason: String?
    /// A short, fixed description of the outcome ("incorrect password", "3 keys dropped").
    public var detail: String?

    public init(event: AuditEvent, user: String, pamService: String? = nil, itemService: String? = nil,
                account: String? = nil, scope: String? = nil, reason: String? = nil, detail: String? = nil) {
        self.event = event
        self.user = user
        self.pamService = pamService
        self.itemService = itemService
        self.account = account
        self.scope = scope
        self.reason = reason
        self.detail = detail
    }

    /// `auth-failure user=alice pam-service=keygate scope=tty.34816.77 reason="unlock the keychain" detail="incorrect password"`
    public var line: String {
        var fields = [event.rawValue, "user=" + Self.quoted(user)]
        let optional: [(String, String?)] = [("pam-service", pamService), ("service", itemService), ("account", account),
                                             ("scope", scope), ("reason", reason), ("detail", detail)]
        for (name, value) in optional {
            if let value { fields.append(name + "=" + Self.quoted(value)) }
        }
        return fields.joined(separator: " ")
    }

    /// The value as is when it is a plain word; else in double quotes, with `"` and `\`
    /// escaped and control characters (a newline in a reason) as \xNN, so one record is one line.
    static func quoted(_ value: String) -> String {
        let plain = !value.isEmpty && value.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F && $0 != "\"" && $0 != "\\" && $0 != "=" }
        if plain { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

public enum AuditLog {
    private static let echo = Atomic<Bool>(false)

    /// When true, every audit line is also written to stderr as `keygate: audit: LINE` (the CLI's --verbose).
    public static var echoToStandardError: Bool {
        get { echo.load(ordering: .relaxed) }
        set { echo.store(newValue, ordering: .relaxed) }
    }

    /// Makes this process log as "keygate[PID]" on facility authpriv. For programs that
    /// are Keygate (the CLI); a library inside another program (a PAM host) keeps its ident.
    public static func identifyAsKeygate() {
        keygate_openlog()
    }

    /// Sends one record to syslog (authpriv) and, with --verbose, to stderr.
    public static func record(_ record: AuditRecord) {
        let line = record.line
        let priority = record.event.isWarning ? keygate_log_authpriv_warning() : keygate_log_authpriv_notice()
        keygate_syslog(priority, line)
        if echoToStandardError {
            var bytes = Array("keygate: audit: \(line)\n".utf8)
            SafeFile.writeAll(2, bytes)
            bytes.removeAll()
        }
    }
}
