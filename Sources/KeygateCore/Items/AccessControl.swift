// An item's access control: Apple's SecAccessControlCreateFlags with Apple's bit values
// and Apple's validation rules, plus the text form the CLI takes (--access LIST
// [--or|--and]) and the Secret Service stores (attribute "keygate:access"). What each
// constraint means cryptographically is docs/ACCESS_CONTROL.md; this type only names them.

/// Apple's SecAccessControlCreateFlags, with Apple's bit values.
public struct AccessControl: OptionSet, Sendable, Hashable, Codable {
    public let rawValue: UInt32

    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Any of the user's credentials (kSecAccessControlUserPresence).
    public static let userPresence = AccessControl(rawValue: 1 << 0)
    /// Any enrolled finger: a fingerprint match through fprintd, run by the gatekeeper
    /// (kSecAccessControlBiometryAny).
    public static let biometryAny = AccessControl(rawValue: 1 << 1)
    /// A finger of the set enrolled when the item was added: unreadable once a finger is enrolled,
    /// removed or re-enrolled (kSecAccessControlBiometryCurrentSet).
    public static let biometryCurrentSet = AccessControl(rawValue: 1 << 3)
    /// Keygate's own flag, no Apple bit: the password, and unreadable once it changes (bound to the
    /// shadow entry). Items that Keygate 0.1.0 sealed as `biometryCurrentSet` meant this, and
    /// keep meaning it (docs/ACCESS_CONTROL.md, "Migration").
    public static let currentSet = AccessControl(rawValue: 1 << 24)
    /// The password only (kSecAccessControlDevicePasscode).
    public static let devicePasscode = AccessControl(rawValue: 1 << 4)
    /// Any one of the constraints is enough (kSecAccessControlOr).
    public static let or = AccessControl(rawValue: 1 << 14)
    /// Every constraint must hold (kSecAccessControlAnd).
    public static let and = AccessControl(rawValue: 1 << 15)

    /// The constraints, in a fixed order.
    public enum Constraint: String, Sendable, CaseIterable {
        case userPresence = "user-presence"
        case devicePasscode = "device-passcode"
        case biometryAny = "biometry-any"
        case biometryCurrentSet = "biometry-current-set"
        case currentSet = "current-set"

        /// The flag this constraint is.
        public var flag: AccessControl {
            switch self {
            case .userPresence: return .userPresence
            case .devicePasscode: return .devicePasscode
            case .biometryAny: return .biometryAny
            case .biometryCurrentSet: return .biometryCurrentSet
            case .currentSet: return .currentSet
            }
        }

        /// The name the CLI accepts for `text`: Keygate's own names (current-set is the password's)
        /// and Apple's (userPresence, kSecAccessControlDevicePasscode, touchIDAny, ...), any case.
        init?(name text: String) {
            let key = text.lowercased()
            if let direct = Constraint(rawValue: key) { self = direct; return }
            let bare = key.hasPrefix("ksecaccesscontrol") ? String(key.dropFirst("ksecaccesscontrol".count)) : key
            // A switch, not a dictionary: no Hashable lookup at run time on the read path.
            let found: Constraint
            switch bare {
            case "biometrycurrentset", "touchidcurrentset": found = .biometryCurrentSet
            case "password-current-set": found = .currentSet
            case "userpresence": found = .userPresence
            case "devicepasscode": found = .devicePasscode
            case "biometryany", "touchidany": found = .biometryAny
            default: return nil
            }
            self = found
        }
    }

    /// Every bit Keygate knows.
    private static let known: AccessControl = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .currentSet, .or, .and]
    private static let constraintBits: AccessControl = [.userPresence, .biometryAny, .biometryCurrentSet, .devicePasscode, .currentSet]
    private static let validNames = Constraint.allCases.map(\.rawValue).joined(separator: ", ")

    /// Apple's rules: `and` with `or`; both biometry flags; userPresence with any other constraint → .param with a
    /// message that says why and what to use instead. No constraint at all → .param. Unknown bits → .param.
    public func validate() throws {
        let unknown = rawValue & ~Self.known.rawValue
        if unknown != 0 {
            throw KeychainError.param("access control has flag bits Keygate does not support (0x\(String(unknown, radix: 16))), "
                + "such as Apple's watch, companion, privateKeyUsage or applicationPassword: "
                + "use only user-presence, device-passcode, biometry-any, biometry-current-set, current-set, with or/and")
        }
        if contains(.and) && contains(.or) {
            throw KeychainError.param("access control asks for both `and` and `or`: choose one, "
                + "--and (every constraint must hold) or --or (any one is enough)")
        }
        if contains(.biometryAny) && contains(.biometryCurrentSet) {
            throw KeychainError.param("access control has both biometry-any and biometry-current-set, which Apple refuses: "
                + "choose biometry-current-set (the item becomes unreadable when a finger is enrolled or removed) or biometry-any "
                + "(it never does)")
        }
        if contains(.userPresence) && !intersection(Self.constraintBits).subtracting(.userPresence).isEmpty {
            throw KeychainError.param("user-presence cannot be combined with another constraint, which Apple refuses: "
                + "user-presence already accepts any of your credentials; to combine, list the specific ones instead, "
                + "e.g. --access device-passcode,biometry-any --or")
        }
        if intersection(Self.constraintBits).isEmpty {
            throw KeychainError.param("access control has no constraint: give at least one of \(Self.validNames) "
                + "(user-presence is the usual choice)")
        }
    }

    public var constraints: [Constraint] {
        Constraint.allCases.filter { contains($0.flag) }
    }

    /// true when several constraints must all hold: `and`, or several constraints with neither and/or
    /// (Keygate reads that as `and`, the stricter choice); false for `or`.
    public var requiresAll: Bool {
        if contains(.or) { return false }
        if contains(.and) { return true }
        return constraints.count > 1
    }

    /// What a person may present for an item with these flags, as on Apple (docs/ACCESS_CONTROL.md,
    /// "Fallbacks, flag by flag"). The gatekeeper decides with it; a reader decides nothing.
    public enum Credentials: Sendable, Equatable {
        /// The password: devicePasscode, current-set, and their combinations.
        case password
        /// A finger only: biometryAny or biometryCurrentSet alone, as on Apple.
        case finger
        /// A finger where a reader and an enrolled finger exist (and biometry is not locked out),
        /// else the password, also after a failed match: userPresence, and a biometry flag `or`
        /// devicePasscode (or current-set).
        case fingerOrPassword
        /// The password and a finger: a biometry flag `and` devicePasscode (or current-set).
        case fingerAndPassword
    }

    public var credentials: Credentials {
        let list = constraints
        if list.contains(.userPresence) { return .fingerOrPassword }
        let finger = list.contains { $0 == .biometryAny || $0 == .biometryCurrentSet }
        let password = list.contains { $0 == .devicePasscode || $0 == .currentSet }
        switch (finger, password) {
        case (true, false): return .finger
        case (true, true): return requiresAll ? .fingerAndPassword : .fingerOrPassword
        case (false, _): return .password
        }
    }

    /// The item asks for a finger and nothing else (biometryAny, biometryCurrentSet): no password
    /// is typed for it, so a locked keychain must be opened by itself first.
    public var asksForFingerOnly: Bool { credentials == .finger }

    /// CLI form: "user-presence", "device-passcode,current-set" (+ ";or" / ";and" when given). Also the
    /// attribute value stored in the Secret Service.
    public var attributeValue: String {
        var text = constraints.map(\.rawValue).joined(separator: ",")
        if contains(.or) { text += ";or" }
        if contains(.and) { text += ";and" }
        return text
    }

    /// Parses the CLI form (--access LIST [--or|--and]): a comma list of constraint names. Keygate's names,
    /// "biometry-current-set" and Apple's names ("userPresence", "kSecAccessControlDevicePasscode") are
    /// accepted, in any case. Throws .param on an unknown name, with the valid ones. Validates.
    public init(parsing list: String, or: Bool, and: Bool) throws {
        var flags = AccessControl()
        for piece in list.split(separator: ",", omittingEmptySubsequences: false) {
            let name = piece.trimmingSpaces
            guard !name.isEmpty else {
                throw KeychainError.param("the access list \"\(list)\" has an empty name: give a comma list of \(Self.validNames)")
            }
            guard let constraint = Constraint(name: name) else {
                throw KeychainError.param("unknown access constraint \"\(name)\": use one or more of \(Self.validNames), "
                    + "separated by commas (Apple's names such as userPresence work too)")
            }
            flags.insert(constraint.flag)
        }
        if or { flags.insert(.or) }
        if and { flags.insert(.and) }
        try flags.validate()
        self = flags
    }

    /// Parses the stored form written by `attributeValue` ("LIST", "LIST;or", "LIST;and"). Validates.
    public init(attributeValue: String) throws {
        let parts = attributeValue.split(separator: ";", omittingEmptySubsequences: false)
        guard parts.count <= 2 else {
            throw KeychainError.param("the access control \"\(attributeValue)\" has more than one \";\": write LIST, LIST;or or LIST;and")
        }
        var or = false, and = false
        if parts.count == 2 {
            switch parts[1].trimmingSpaces.lowercased() {
            case "or": or = true
            case "and": and = true
            default:
                throw KeychainError.param("the access control \"\(attributeValue)\" ends in \";\(parts[1])\": "
                    + "only \";or\" or \";and\" may follow the list")
            }
        }
        try self.init(parsing: String(parts[0]), or: or, and: and)
    }
}

private extension Substring {
    /// Without spaces and tabs at either end (by UTF-8 index: no generic wrappers to instantiate).
    var trimmingSpaces: String {
        let bytes = utf8
        var start = bytes.startIndex, end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start = bytes.index(after: start) }
        while end > start {
            let before = bytes.index(before: end)
            guard bytes[before] == 0x20 || bytes[before] == 0x09 else { break }
            end = before
        }
        return String(self[start..<end])
    }
}
