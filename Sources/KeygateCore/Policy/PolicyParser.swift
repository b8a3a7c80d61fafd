// Parses one policy file's text into sections, collecting every error with its
// file:line:column and what was expected (so `keygate policy check` can list them
// all). Works on bytes, line by line, with no recursion and no regular expressions:
// any input, however hostile, is parsed in linear time. Values are delegated to
// PolicyValues, globs to PolicyGlob. Reading the file safely is PolicyFileReader's job.
//
// Grammar (one construct per line; leading and trailing blanks ignored):
//   # comment            ; comment           (only on a line of their own)
//   [default]
//   [service "GLOB"]     [account "GLOB"]     [service "GLOB" account "GLOB"]
//   [secret-service "SCHEMA-GLOB"]     [secret-service "SCHEMA-GLOB" attribute "NAME=GLOB"]
//   key = value
// A [secret-service] section matches the items Secret Service clients make, by their
// attributes (SecretServiceMatch), and takes only the access keys.

/// A parse error at a place in a file. Columns count bytes, from 1.
public struct PolicyParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    public var message: String

    /// "file:line:column: message"; a file that could not be read at all has no line: "file: message".
    public var description: String { line > 0 ? "\(file):\(line):\(column): \(message)" : "\(file): \(message)" }
}

/// What a `[secret-service ...]` section matches: the items Secret Service clients make, by their
/// `xdg:schema` attribute (an item without one has the empty schema, which only `*` matches) and,
/// optionally, one more attribute whose value matches a glob (an item without it does not match).
struct SecretServiceMatch: Sendable, Equatable {
    var schema: PolicyGlob
    /// The other attribute's name (exact text), or nil.
    var attributeName: String?
    var attributeValue: PolicyGlob = .any

    func matches(_ attributes: [String: String]) -> Bool {
        guard schema.matches(attributes["xdg:schema"] ?? "") else { return false }
        guard let attributeName else { return true }
        guard let value = attributes[attributeName] else { return false }
        return attributeValue.matches(value)
    }

    var title: String {
        "[secret-service \"\(schema.pattern)\"" + (attributeName.map { " attribute \"\($0)=\(attributeValue.pattern)\"" } ?? "") + "]"
    }

    /// The schema first, then the attribute (a section with one is more specific than one without).
    var specificity: (PolicyGlob.Specificity, PolicyGlob.Specificity) {
        let none = PolicyGlob.Specificity(exact: -1, fewerWildcards: 0, literals: 0)
        return (schema.specificity, attributeName == nil ? none : attributeValue.specificity)
    }

    /// The keys a [secret-service] section takes: what access a client's new item gets.
    static let keys: Set<PolicyKey> = [.defaultAccess, .minimumAccess]
}

/// One `[...]` section and the keys under it.
struct PolicySection: Sendable {
    var service: PolicyGlob
    var account: PolicyGlob
    /// A `[secret-service ...]` section: it matches Secret Service clients' items, never Keygate's own.
    var secretService: SecretServiceMatch? = nil
    /// The header line.
    var line: Int
    var settings = PolicySettings()
    /// The line each key was set on.
    var keyLines = PolicyKeyMap<Int>()

    /// The header in canonical form: `[default]`, `[service "vpn*"]`, `[service "x" account "y"]`.
    var title: String {
        if let secretService { return secretService.title }
        switch (service.matchesEverything, account.matchesEverything) {
        case (true, true): return "[default]"
        case (false, true): return "[service \"\(service.pattern)\"]"
        case (true, false): return "[account \"\(account.pattern)\"]"
        case (false, false): return "[service \"\(service.pattern)\" account \"\(account.pattern)\"]"
        }
    }

    /// Service first, then account (see PolicyGlob.specificity).
    var specificity: (PolicyGlob.Specificity, PolicyGlob.Specificity) {
        secretService?.specificity ?? (service.specificity, account.specificity)
    }

    /// Whether this section holds for every item of Keygate's own (a [default] section).
    var isDefault: Bool { secretService == nil && service.matchesEverything && account.matchesEverything }

    /// Whether two sections match the same items (so a later one overrides the earlier, key by key).
    func sameMatch(as other: PolicySection) -> Bool {
        guard secretService == other.secretService else { return false }
        return normalized(service) == normalized(other.service) && normalized(account) == normalized(other.account)
    }

    private func normalized(_ glob: PolicyGlob) -> String { glob.matchesEverything ? "*" : glob.pattern }

    func matches(service s: String, account a: String) -> Bool { secretService == nil && service.matches(s) && account.matches(a) }
}

/// The result of parsing one file: its sections and every error found.
struct ParsedPolicy: Sendable {
    var sections: [PolicySection] = []
    var errors: [PolicyParseError] = []
}

enum PolicyParser {
    /// The largest policy file Keygate reads: 64 KiB.
    static let maximumBytes = 64 * 1024
    /// The most errors reported for one file; after that, one line says so.
    static let maximumErrors = 50

    static func parse(_ text: String, file: String) -> ParsedPolicy { parse(Array(text.utf8), file: file) }

    static func parse(_ bytes: [UInt8], file: String) -> ParsedPolicy {
        var run = Run(file: file)
        guard bytes.count <= maximumBytes else {
            run.error(1, 1, "the file is larger than \(maximumBytes / 1024) KiB, too large to be a policy file")
            return run.result
        }
        // The shared line syntax (ConfigSyntax): a byte-order mark, as some editors write, is skipped.
        ConfigSyntax.forEachLine(bytes) { line, number in
            run.line(line, number: number)
            guard run.result.errors.count > maximumErrors else { return true }
            run.result.errors.removeLast()
            run.error(number, 1, "too many errors (more than \(maximumErrors)); fix these first")
            return false
        }
        return run.result
    }

    private struct Run {
        let file: String
        var result = ParsedPolicy()
        /// Index into result.sections of the open section; nil before any header or after a broken one.
        var current: Int? = nil
        /// A header on this line was broken: its keys are still checked but not reported as "outside a section".
        var inBrokenSection = false

        init(file: String) { self.file = file }

        mutating func error(_ line: Int, _ column: Int, _ message: String) {
            result.errors.append(PolicyParseError(file: file, line: line, column: column, message: message))
        }

        mutating func line(_ bytes: [UInt8], number: Int) {
            switch ConfigSyntax.classify(bytes, fileKind: "a policy file") {
            case .nothing: return
            case .problem(let column, let message): error(number, column, message)
            case .header(let column): header(bytes, from: column - 1, number: number)
            case .setting(let name, let keyColumn, let value, let valueColumn):
                setting(name, keyColumn: keyColumn, value: value, valueColumn: valueColumn, number: number)
            }
        }

        // MARK: - [section]

        mutating func header(_ bytes: [UInt8], from open: Int, number: Int) {
            switch Self.parseHeader(bytes, from: open) {
            case .failure(let problem):
                error(number, problem.column, problem.message)
                current = nil
                inBrokenSection = true
            case .success(let header):
                let section = PolicySection(service: header.service, account: header.account, secretService: header.secretService,
                                            line: number)
                if let earlier = result.sections.first(where: { $0.sameMatch(as: section) }) {
                    error(number, open + 1, "duplicate section: \(section.title) matches the same items as "
                          + "\(earlier.title) at line \(earlier.line); merge the two")
                    current = nil
                    inBrokenSection = true
                    return
                }
                result.sections.append(section)
                current = result.sections.count - 1
                inBrokenSection = false
            }
        }

        struct Problem { var column: Int; var message: String }

        static let sectionForms = "[default], [service \"GLOB\"], [account \"GLOB\"], [service \"GLOB\" account \"GLOB\"] "
            + "or [secret-service \"SCHEMA-GLOB\"] (optionally with attribute \"NAME=GLOB\")"

        struct Header {
            var service: PolicyGlob
            var account: PolicyGlob
            var secretService: SecretServiceMatch?
        }

        /// What parseHeader found: a concrete enum rather than `Result<Header, Problem>`. The generic
        /// Result's metadata is made at run time from its mangled name, and checking its `Failure: Error`
        /// requirement scans every protocol conformance record in the program (~150,000 instructions,
        /// on every command that reads a policy file, which is every read).
        enum HeaderResult {
            case success(Header)
            case failure(Problem)
        }

        static func parseHeader(_ b: [UInt8], from open: Int) -> HeaderResult {
            var i = open + 1
            var service: PolicyGlob? = nil
            var account: PolicyGlob? = nil
            var schema: PolicyGlob? = nil
            var attribute: (name: String, value: PolicyGlob)? = nil
            var sawDefault = false
            while true {
                while i < b.count, isBlank(b[i]) { i += 1 }
                guard i < b.count else {
                    return .failure(Problem(column: i + 1, message: "unterminated section header: expected `]`"))
                }
                if b[i] == UInt8(ascii: "]") { break }
                let wordStart = i
                while i < b.count, isWordByte(b[i]) || (i > wordStart && b[i] == UInt8(ascii: "-")) { i += 1 }
                let word = String(decoding: b[wordStart..<i], as: UTF8.self)
                if word.isEmpty {
                    return .failure(Problem(column: i + 1, message: "expected `]`, `service \"GLOB\"` or `account \"GLOB\"` in the section header"))
                }
                if sawDefault {
                    return .failure(Problem(column: wordStart + 1, message: "expected `]` after `default`: [default] takes no globs"))
                }
                switch word {
                case "default":
                    if service != nil || account != nil {
                        return .failure(Problem(column: wordStart + 1, message: "`default` cannot follow a glob: write \(sectionForms)"))
                    }
                    sawDefault = true
                    continue
                case "service", "account":
                    if (word == "service" ? service : account) != nil {
                        return .failure(Problem(column: wordStart + 1, message: "`\(word)` is given twice in this section header"))
                    }
                    if schema != nil {
                        return .failure(Problem(column: wordStart + 1, message: """
                            a [secret-service] section matches clients' items by their attributes, not by `\(word)`: \
                            use attribute "NAME=GLOB"
                            """))
                    }
                case "secret-service":
                    if schema != nil {
                        return .failure(Problem(column: wordStart + 1, message: "`secret-service` is given twice in this section header"))
                    }
                    if service != nil || account != nil {
                        return .failure(Problem(column: wordStart + 1, message: """
                            `secret-service` starts its own kind of section: write [secret-service "SCHEMA-GLOB"] on a header of its own
                            """))
                    }
                case "attribute":
                    if schema == nil {
                        return .failure(Problem(column: wordStart + 1, message: """
                            `attribute` goes after `secret-service "SCHEMA-GLOB"` (use "*" for any schema)
                            """))
                    }
                    if attribute != nil {
                        return .failure(Problem(column: wordStart + 1, message: "`attribute` is given twice in this section header: one a section"))
                    }
                default:
                    return .failure(Problem(column: wordStart + 1,
                                            message: "unknown section \"\(word)\": expected \(sectionForms)"))
                }
                while i < b.count, isBlank(b[i]) { i += 1 }
                guard i < b.count, b[i] == UInt8(ascii: "\"") else {
                    return .failure(Problem(column: i + 1, message: "expected a quoted glob after `\(word)`, e.g. \(word) \"vpn*\""))
                }
                let quote = i
                i += 1
                let globStart = i
                while i < b.count, b[i] != UInt8(ascii: "\"") { i += 1 }
                guard i < b.count else {
                    return .failure(Problem(column: quote + 1, message: "unterminated quoted glob: expected a closing `\"`"))
                }
                let glob = String(decoding: b[globStart..<i], as: UTF8.self)
                if glob.isEmpty {
                    return .failure(Problem(column: quote + 1, message: "expected a glob between the quotes (use \"*\" for any)"))
                }
                i += 1
                switch word {
                case "service": service = PolicyGlob(glob)
                case "account": account = PolicyGlob(glob)
                case "secret-service": schema = PolicyGlob(glob)
                default:
                    // NAME=GLOB: the name is exact text, the value a glob.
                    guard let equals = glob.firstIndex(of: "="), equals != glob.startIndex, glob.index(after: equals) != glob.endIndex else {
                        return .failure(Problem(column: globStart + 1, message: """
                            expected "NAME=GLOB" after `attribute`, e.g. attribute "server=*.example.org"
                            """))
                    }
                    let name = String(glob[..<equals])
                    if name.contains("*") || name.contains("?") {
                        return .failure(Problem(column: globStart + 1, message: """
                            an attribute's name is exact text, not a glob: write the whole name before `=`
                            """))
                    }
                    attribute = (name, PolicyGlob(String(glob[glob.index(after: equals)...])))
                }
            }
            if !sawDefault, service == nil, account == nil, schema == nil {
                return .failure(Problem(column: i + 1, message: "empty section header: expected \(sectionForms)"))
            }
            i += 1
            while i < b.count, isBlank(b[i]) { i += 1 }
            if i < b.count {
                return .failure(Problem(column: i + 1, message: "unexpected text after `]` (comments go on their own line)"))
            }
            let match = schema.map { SecretServiceMatch(schema: $0, attributeName: attribute?.name, attributeValue: attribute?.value ?? .any) }
            return .success(Header(service: service ?? .any, account: account ?? .any, secretService: match))
        }

        // MARK: - key = value

        /// `name = value`, as ConfigSyntax split it: a known key, in a section, with a valid value.
        mutating func setting(_ name: String, keyColumn: Int, value: String, valueColumn: Int, number: Int) {
            let keyStart = keyColumn - 1
            // `access` is the shorthand for default-access and minimum-access together.
            let keys: [PolicyKey]
            if name == PolicyKey.accessShorthand {
                keys = PolicyKey.accessShorthandKeys
            } else if let key = PolicyKey(rawValue: name) {
                keys = [key]
            } else {
                let hint = Self.suggestion(for: name).map { " (did you mean \"\($0)\"?)" } ?? ""
                error(number, keyStart + 1, "unknown key \"\(name)\"\(hint): expected one of "
                      + PolicyKey.allNames.joined(separator: ", "))
                return
            }
            guard !value.isEmpty else {
                error(number, valueColumn, "expected a value after `\(name) =`")
                return
            }
            var settings = PolicySettings()
            do {
                for key in keys { try PolicyValues.apply(key, value, to: &settings) }
            } catch {
                self.error(number, valueColumn + error.offset, "bad value for \(name): \(error.message)")
                return
            }
            guard let index = current else {
                if !inBrokenSection {
                    error(number, keyStart + 1, "the key \"\(name)\" is outside any section: put a [default] or "
                          + "[service \"GLOB\"] header above it")
                }
                return
            }
            if result.sections[index].secretService != nil, !keys.allSatisfy(SecretServiceMatch.keys.contains) {
                error(number, keyStart + 1, "the key \"\(name)\" does not apply in a [secret-service] section: it takes only "
                      + "access, default-access and minimum-access (the access a client's new item gets)")
                return
            }
            if keys.contains(where: \.isKeychainWide), !result.sections[index].isDefault {
                error(number, keyStart + 1, "the key \"\(name)\" applies to the whole keychain, not to items: "
                      + "set it in a [default] section")
                return
            }
            for key in keys {
                if let first = result.sections[index].keyLines[key] {
                    let also = keys.count > 1 ? " (`access` sets default-access and minimum-access)"
                        : PolicyKey.accessShorthandKeys.contains(key) ? " (`access` sets \(key.rawValue) too)" : ""
                    error(number, keyStart + 1, "duplicate key \"\(name)\" in \(result.sections[index].title) "
                          + "(first set at line \(first))\(also): keep one")
                    return
                }
            }
            for key in keys {
                result.sections[index].settings.take(key, from: settings)
                result.sections[index].keyLines[key] = number
            }
        }

        static func suggestion(for name: String) -> String? {
            let lower = name.lowercased().replacingUnderscores()
            if let direct = PolicyKey(rawValue: lower) { return direct.rawValue }
            if lower == PolicyKey.accessShorthand { return lower }
            // The keys before the shorthand: "accessible-…" suggests accessible, not access.
            return (PolicyKey.allCases.map(\.rawValue) + [PolicyKey.accessShorthand]).first { $0.hasPrefix(lower) || lower.hasPrefix($0) }
        }
    }
}

/// A blank in a policy file: space or tab (also between the words of a value, PolicyValues).
func isBlank(_ b: UInt8) -> Bool { ConfigSyntax.isBlank(b) }
private func isWordByte(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) }

private extension String {
    func replacingUnderscores() -> String { String(map { $0 == "_" ? "-" : $0 }) }
}
