// Turns the text after `key =` into a typed setting, or says what was expected.
// Access lists delegate to AccessControl's own parser and Apple's validation;
// accessibility classes and reuse scopes to their enums. Nothing here reads files.

/// A bad value: what was expected, and the byte offset inside the value where it went wrong.
struct PolicyValueError: Error, Sendable {
    var message: String
    var offset: Int = 0
}

enum PolicyValues {
    /// The most a duration may be: 100 days. Larger is almost surely a typo.
    static let maximumSeconds: UInt64 = 100 * 24 * 3600
    static let maximumTries = 100
    static let maximumPromptLength = 200

    /// Sets `key` in `settings` from `value` (already trimmed, not empty).
    static func apply(_ key: PolicyKey, _ value: String, to settings: inout PolicySettings) throws(PolicyValueError) {
        switch key {
        case .defaultAccess: settings.defaultAccess = try access(value)
        case .minimumAccess: settings.minimumAccess = try access(value)
        case .accessible: settings.accessible = try accessible(value)
        case .reuseDuration: settings.reuseDuration = try seconds(value, key)
        case .lockout: settings.lockout = try seconds(value, key)
        case .lockAfter: settings.lockAfter = try seconds(value, key)
        case .fingerUnlock: settings.fingerUnlock = try seconds(value, key)
        case .reuseScope: settings.reuseScope = try scope(value)
        case .pamService: settings.pamService = try pamService(value)
        case .prompt: settings.prompt = try prompt(value)
        case .maxTries: settings.maxTries = try tries(value)
        case .allowNonInteractive: settings.allowNonInteractive = try yesNo(value)
        case .hostProtector: settings.hostProtector = try principals(value)
        }
    }

    /// `none`, or a list (commas or blanks) of user names and `%group` names, as sudoers
    /// writes groups. No globs: enabling the host protector names each account or group.
    static func principals(_ value: String) throws(PolicyValueError) -> [String] {
        if value.lowercased() == "none" { return [] }
        var result: [String] = []
        var offset = 0
        for token in value.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            defer { offset += token.utf8.count + 1 }
            if token.isEmpty { continue }
            let name = token.hasPrefix("%") ? token.dropFirst() : Substring(token)
            let valid = !name.isEmpty && name.utf8.count <= 32 && name.utf8.enumerated().allSatisfy { index, byte in
                (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F
                    || (index > 0 && ((byte >= 0x30 && byte <= 0x39) || byte == 0x2D || byte == 0x2E || byte == 0x24))
            }
            guard valid else {
                throw PolicyValueError(message: """
                    expected user names and %group names separated by commas (e.g. `svc-backup, %keygate-services`), or `none`; \
                    \"\(token)\" is not a user or group name (no globs)
                    """, offset: offset)
            }
            if !result.contains(String(token)) { result.append(String(token)) }
        }
        return result
    }

    /// `none`, or a comma list of constraints with an optional trailing `and` / `or`
    /// ("device-passcode,current-set and"), or the stored form "LIST;and".
    static func access(_ value: String) throws(PolicyValueError) -> AccessControl {
        if value.lowercased() == "none" { return AccessControl() }
        do {
            // A byte search: String.contains(some StringProtocol) comes from _StringProcessing and
            // instantiates its generic searchers at run time.
            if value.utf8.contains(UInt8(ascii: ";")) { return try AccessControl(attributeValue: value) }
            // Bytes, not Characters: splitting a String into words walks grapheme clusters and
            // builds an array of Substrings, a third of this function's cost on every read.
            let bytes = Array(value.utf8)
            // The last word is `and` or `or` when another word comes before it.
            var end = bytes.count
            while end > 0, isBlank(bytes[end - 1]) { end -= 1 }
            var lastStart = end
            while lastStart > 0, !isBlank(bytes[lastStart - 1]) { lastStart -= 1 }
            var before = lastStart
            while before > 0, isBlank(bytes[before - 1]) { before -= 1 }
            var or = false, and = false
            if before > 0 {
                let last = String(decoding: bytes[lastStart..<end], as: UTF8.self).lowercased()
                if last == "and" || last == "or" {
                    or = last == "or"
                    and = last == "and"
                    end = before
                }
            }
            // The names before it, split at blanks and commas, as one comma list without empty names.
            var list = ""
            var start = 0
            for i in 0...end where i == end || isBlank(bytes[i]) || bytes[i] == UInt8(ascii: ",") {
                if i > start {
                    if !list.isEmpty { list += "," }
                    list += String(decoding: bytes[start..<i], as: UTF8.self)
                }
                start = i + 1
            }
            return try AccessControl(parsing: list, or: or, and: and)
        } catch let error as KeychainError {
            throw PolicyValueError(message: "expected an access list such as `user-presence` or `device-passcode,current-set and`, or `none`: "
                                   + error.message.replacingCLIFlags())
        } catch {
            throw PolicyValueError(message: "expected an access list such as `user-presence`, or `none`")
        }
    }

    static func accessible(_ value: String) throws(PolicyValueError) -> Accessibility {
        if let found = Accessibility(name: value.lowercased()) { return found }
        throw PolicyValueError(message: "expected an accessibility class: "
                               + Accessibility.allCases.map(\.rawValue).joined(separator: ", "))
    }

    /// A whole number of seconds, or with a suffix: `90`, `90s`, `5m`, `1h`.
    static func seconds(_ value: String, _ key: PolicyKey) throws(PolicyValueError) -> UInt32 {
        // Built only when the value is wrong (every read parses the default policy's durations).
        func expected() -> String { "expected a number of seconds for \(key.rawValue), optionally with s, m or h (e.g. 300, 5m, 1h)" }
        let bytes = Array(value.utf8)
        var digits = 0
        var number: UInt64 = 0
        while digits < bytes.count, bytes[digits] >= 0x30, bytes[digits] <= 0x39 {
            number = number * 10 + UInt64(bytes[digits] - 0x30)
            digits += 1
            if number > maximumSeconds * 3600 { break }
        }
        guard digits > 0 else { throw PolicyValueError(message: expected()) }
        var multiplier: UInt64 = 1
        if digits < bytes.count {
            switch bytes[digits] {
            case UInt8(ascii: "s"): multiplier = 1
            case UInt8(ascii: "m"): multiplier = 60
            case UInt8(ascii: "h"): multiplier = 3600
            default:
                let hint = bytes[digits] == UInt8(ascii: "#") || bytes[digits] == UInt8(ascii: " ")
                    ? " (comments go on their own line)" : ""
                throw PolicyValueError(message: expected() + hint, offset: digits)
            }
            guard digits + 1 == bytes.count else {
                throw PolicyValueError(message: expected() + " (comments go on their own line)", offset: digits + 1)
            }
        }
        let total = number * multiplier
        guard total <= maximumSeconds else {
            throw PolicyValueError(message: "\(key.rawValue) is too long: at most \(maximumSeconds) seconds (100 days)")
        }
        return UInt32(total)
    }

    static func scope(_ value: String) throws(PolicyValueError) -> ReuseScope.Kind {
        if let kind = ReuseScope.Kind(rawValue: value.lowercased()) { return kind }
        throw PolicyValueError(message: "expected a reuse scope: tty, ppid, session or global")
    }

    /// A PAM service name: letters, digits, `.`, `_` and `-`, not starting with `.` (it names a file in /etc/pam.d).
    static func pamService(_ value: String) throws(PolicyValueError) -> String {
        let bytes = Array(value.utf8)
        for (index, byte) in bytes.enumerated() {
            let ok = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || (index > 0 && (byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")))
            if !ok || index >= 64 {
                throw PolicyValueError(message: "expected a PAM service name (a file in /etc/pam.d): letters, digits, `.`, `_` "
                                       + "and `-`, at most 64, starting with a letter or digit", offset: index)
            }
        }
        return value
    }

    /// Free text, quotes optional: `Unlock the VPN` or `"Unlock the VPN"`.
    static func prompt(_ value: String) throws(PolicyValueError) -> String {
        var text = value
        if text.hasPrefix("\"") {
            guard text.count >= 2, text.hasSuffix("\"") else {
                throw PolicyValueError(message: "expected a closing `\"` at the end of the prompt", offset: value.utf8.count)
            }
            text = String(text.dropFirst().dropLast())
        }
        guard !text.isEmpty else { throw PolicyValueError(message: "expected the prompt's text, not an empty string") }
        guard text.count <= maximumPromptLength else {
            throw PolicyValueError(message: "the prompt is too long: at most \(maximumPromptLength) characters")
        }
        return text
    }

    static func tries(_ value: String) throws(PolicyValueError) -> Int {
        if value.utf8.count <= 3, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value),
           n >= 1, n <= maximumTries {
            return n
        }
        throw PolicyValueError(message: "expected a whole number of tries from 1 to \(maximumTries)")
    }

    static func yesNo(_ value: String) throws(PolicyValueError) -> Bool {
        switch value.lowercased() {
        case "yes", "true": return true
        case "no", "false": return false
        default: throw PolicyValueError(message: "expected yes, no, true or false")
        }
    }
}

private extension String {
    /// AccessControl's messages speak of CLI flags (--and); in a policy file the words are `and` / `or`.
    func replacingCLIFlags() -> String {
        var out: [UInt8] = []
        var bytes = utf8[...]
        while let first = bytes.first {
            if first == UInt8(ascii: "-"), bytes.dropFirst().first == UInt8(ascii: "-") {
                bytes = bytes.dropFirst(2)
            } else {
                out.append(first)
                bytes = bytes.dropFirst()
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
