// The audit trail: authentication successes, failures and lockouts, unlocks, locks
// and policy refusals, one line each, with the user, the PAM service, the item, the
// scope and the reason; never a secret. As in swift-log, the API (AuditLog.record) is
// apart from the backends (AuditLogHandler): syslog by default (facility authpriv, so
// the journal or /var/log/auth.log keeps them), stderr as well with the CLI's --verbose,
// and an in-memory one for tests (AuditLogHandler.swift, InMemoryAuditHandler.swift).
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
    package static func quoted(_ value: String) -> String {
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
    /// The backends every record goes to, in order: syslog alone unless the program says otherwise
    /// (`bootstrap`, as swift-log's LoggingSystem; tests install an InMemoryAuditHandler).
    private static let backends = Mutex<[any AuditLogHandler]>([SyslogAuditHandler()])

    /// Replaces the backends. A program sets them once at start; a test sets its own and puts
    /// `handlers` back afterwards.
    public static func bootstrap(_ handlers: [any AuditLogHandler]) {
        backends.withLock { $0 = handlers }
    }

    /// The backends in use.
    public static var handlers: [any AuditLogHandler] {
        backends.withLock { $0 }
    }

    /// Whether the stderr backend is one of them: every line also on stderr as `keygate: audit: LINE`
    /// (the CLI's --verbose). Setting it twice adds it once.
    public static var echoToStandardError: Bool {
        get { backends.withLock { $0.contains { $0 is StandardErrorAuditHandler } } }
        set {
            backends.withLock { list in
                list.removeAll { $0 is StandardErrorAuditHandler }
                if newValue { list.append(StandardErrorAuditHandler()) }
            }
        }
    }

    /// Makes this process log as "keygate[PID]" on facility authpriv. For programs that
    /// are Keygate (the CLI); a library inside another program (a PAM host) keeps its ident.
    public static func identifyAsKeygate() {
        SyslogAuditHandler.identifyAsKeygate()
    }

    /// Hands one record to every backend. The record is built only when there is a backend.
    public static func record(_ record: @autoclosure () -> AuditRecord) {
        let targets = handlers
        guard !targets.isEmpty else { return }
        let built = record()
        for target in targets { target.log(built) }
    }
}
