// The values Keygate's own settings take, as types: which store (KEYGATE_STORE, keygate.conf),
// whether a locked collection may show its unlock window (KEYGATE_UNLOCK_PROMPT,
// --no-unlock-prompt), and when askpass is used (KEYGATE_ASKPASS_REQUIRE). KeygateEnvironment
// parses the variables into them; KeygateStorage's StoreConfig parses keygate.conf into the same
// store setting; what each value does is the store's and the prompter's.

/// Which backend holds the items.
public enum StoreKind: String, Sendable, CaseIterable {
    case secretService = "secret-service"
    case embedded
}

/// A store setting's value (KEYGATE_STORE, a keygate.conf line): a backend, or `auto` (the Secret
/// Service when one answers, else embedded).
package enum StoreSetting: Equatable, Sendable {
    case fixed(StoreKind)
    case auto

    package init?(text: String) {
        if text == "auto" { self = .auto; return }
        guard let kind = StoreKind(rawValue: text) else { return nil }
        self = .fixed(kind)
    }

    /// The setting as it is written.
    package var text: String {
        switch self {
        case .fixed(let kind): return kind.rawValue
        case .auto: return "auto"
        }
    }

    package static let allowedText = "secret-service, embedded or auto"
}

/// KEYGATE_UNLOCK_PROMPT (or --no-unlock-prompt): whether a locked collection may open the
/// provider's unlock window.
public enum UnlockPromptSetting: String, Sendable, CaseIterable {
    /// Ask for an unlock when a window can be shown (the default).
    case auto
    /// Never ask: a locked collection is an error at once (scripts, cron, CI).
    case never

    /// The environment variable that sets it.
    public static let variable = "KEYGATE_UNLOCK_PROMPT"
}

/// KEYGATE_ASKPASS_REQUIRE, with the meanings of ssh's SSH_ASKPASS_REQUIRE.
package enum AskpassRequirement: String, Sendable, Equatable {
    /// Not set: the terminal first, then askpass.
    case unset = ""
    /// Askpass always (KEYGATE_ASKPASS must be set).
    case force
    /// Askpass first, then the terminal.
    case prefer
    /// The terminal only.
    case never
}
