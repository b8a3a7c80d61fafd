// One option a command accepts: its names, whether it takes a value, and its
// help line. ArgumentParser matches tokens against the names; HelpFormatter
// renders the label ("-s, --service <service>").

/// An option such as `-U`, `-s <service>` or `-T <path>` (repeatable).
struct OptionSpec: Sendable {
    enum Kind: Sendable, Equatable {
        /// Takes no value: `-U`.
        case flag
        /// Takes one value; the last occurrence wins: `-s <service>`.
        case value(valueName: String)
        /// Takes one value each time it is given; all are kept: `-T <path> ...`.
        case repeatedValue(valueName: String)
        /// Takes the next token as its value when there is one; given last, its value is ""
        /// (macOS `security add-generic-password -w [password]`).
        case optionalValue(valueName: String)
    }

    /// Every spelling, e.g. `["-s", "--service"]`. The first long (`--`) name,
    /// or else the first name, is the key ParsedArguments stores values under.
    var names: [String]
    var kind: Kind
    var help: String
    /// Whether the token right after this option may be a secret even when the
    /// option is a flag (macOS `security find-generic-password -w` is a flag, and
    /// people type `-w hunter2`). Error messages never echo such a token.
    /// `-w` and `--password` count as secret whatever this says.
    var secret: Bool = false

    static func flag(_ names: String..., help: String) -> OptionSpec {
        OptionSpec(names: names, kind: .flag, help: help)
    }

    static func value(_ names: String..., valueName: String, help: String) -> OptionSpec {
        OptionSpec(names: names, kind: .value(valueName: valueName), help: help)
    }

    static func repeated(_ names: String..., valueName: String, help: String) -> OptionSpec {
        OptionSpec(names: names, kind: .repeatedValue(valueName: valueName), help: help)
    }

    static func optionalValue(_ names: String..., valueName: String, help: String) -> OptionSpec {
        OptionSpec(names: names, kind: .optionalValue(valueName: valueName), help: help)
    }

    /// A copy marked `secret` (see `secret`).
    func markedSecret() -> OptionSpec {
        var copy = self
        copy.secret = true
        return copy
    }
}

extension OptionSpec {
    /// The name values are stored under: the first long name, else the first name.
    var key: String {
        names.first { $0.hasPrefix("--") } ?? names.first ?? ""
    }

    var takesValue: Bool {
        if case .flag = kind { return false }
        return true
    }

    var valueName: String? {
        switch kind {
        case .flag: return nil
        case .value(let name), .repeatedValue(let name), .optionalValue(let name): return name
        }
    }

    var isRepeated: Bool {
        if case .repeatedValue = kind { return true }
        return false
    }

    /// The names that make the next token possibly secret whatever the configuration says.
    static let conventionalSecretNames: Set<String> = ["-w", "--password"]

    /// Whether the token after this option must never be echoed in an error.
    var guardsNextToken: Bool {
        secret || names.contains { OptionSpec.conventionalSecretNames.contains($0) }
    }
}
