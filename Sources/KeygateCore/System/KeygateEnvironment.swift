// The one configuration value Keygate takes from its process environment: parsed once at an
// edge (the CLI's main, the public `Keychain` and `KeychainOperations`, the Apple layer's
// configuration, the PAM helper's and the gatekeeper's mains) into named, typed fields, and
// passed down as a value. The layers below read fields, never a variable by its name: what a
// layer sees is what its caller gave it, and a test builds one from a dictionary.
// `EnvironmentReadTests` fails on a read of the process environment outside the edges, and on a
// look-up of a variable by name anywhere below them.
//
// A setting whose text is refused (KEYGATE_STORE=sqlite) is parsed here into an error that names
// the variable, its value and the values allowed; it is thrown where the setting is used, so a
// command that does not use it (doctor, status of another part) still runs. The test hooks
// (KEYGATE_TEST_*) are a separate value, `TestHooks`, that only test-hook builds parse.

import Synchronization

public struct KeygateEnvironment: Sendable, Equatable {
    /// The parsed fields, shared by every copy of the value: passing it down copies one reference,
    /// and two values parsed from the same snapshot compare by identity first.
    private let fields: Fields

    // MARK: The user's folders (each set and not empty; a reader that needs an absolute path checks)

    /// HOME.
    package var home: String? { fields.home }
    /// XDG_DATA_HOME.
    package var dataHome: String? { fields.dataHome }
    /// XDG_CONFIG_HOME.
    package var configHome: String? { fields.configHome }
    /// XDG_DATA_DIRS, split at colons (empty entries dropped); nil when unset or empty.
    package var dataDirectories: [String]? { fields.dataDirectories }

    // MARK: Buses and windows

    /// DBUS_SESSION_BUS_ADDRESS.
    package var sessionBusAddress: String? { fields.sessionBusAddress }
    /// XDG_RUNTIME_DIR.
    package var runtimeDirectory: String? { fields.runtimeDirectory }
    /// DBUS_SYSTEM_BUS_ADDRESS, else the system bus's standard socket.
    package var systemBusAddress: String { fields.systemBusAddress }
    /// Whether a window can be shown: DISPLAY or WAYLAND_DISPLAY is set and not empty.
    package var hasDisplay: Bool { fields.hasDisplay }

    // MARK: Keygate's own settings

    /// KEYGATE_STORE: a backend or auto; nil when unset or empty.
    package var store: Parsed<StoreSetting?> { fields.store }
    /// KEYGATE_UNLOCK_PROMPT: auto when unset or empty.
    package var unlockPrompt: Parsed<UnlockPromptSetting> { fields.unlockPrompt }
    /// The store setting, or the error its text earned. The read path asks this, never `store`:
    /// a `Parsed` of a concrete setting held by a caller in another module has the runtime build
    /// that generic type's metadata, whose Equatable requirement costs a walk of every conformance
    /// record in the binary (about 350,000 instructions, twice for an optional) once per process.
    package func storeSetting() throws -> StoreSetting? { try fields.store.get() }
    /// The unlock prompt setting, or the error its text earned (as `storeSetting()`).
    package func unlockPromptSetting() throws -> UnlockPromptSetting { try fields.unlockPrompt.get() }
    /// KEYGATE_ACCESS_GROUPS, split at commas and colons, each trimmed; nil when it names none.
    package var accessGroups: [String]? { fields.accessGroups }

    // MARK: Prompting

    /// KEYGATE_ASKPASS.
    package var askpass: String? { fields.askpass }
    /// KEYGATE_ASKPASS_REQUIRE (ssh's SSH_ASKPASS_REQUIRE meanings): `.unset` when unset or empty.
    package var askpassRequirement: Parsed<AskpassRequirement> { fields.askpassRequirement }
    /// The askpass requirement, or the error its text earned (as `storeSetting()`).
    package func askpassRequirementSetting() throws -> AskpassRequirement { try fields.askpassRequirement.get() }
    /// KEYGATE_PINENTRY.
    package var pinentry: String? { fields.pinentry }
    /// PATH as given, else /usr/local/bin:/usr/bin:/bin: where askpass and pinentry are looked for.
    package var executableSearchPath: String { fields.executableSearchPath }
    /// TERM, else "dumb" (pinentry-curses draws for it).
    package var terminalType: String { fields.terminalType }
    /// The locale's character set and messages: LC_ALL, else LC_CTYPE or LC_MESSAGES, else LANG.
    package var characterLocale: String? { fields.characterLocale }
    package var messagesLocale: String? { fields.messagesLocale }

    // MARK: Where the process came from

    /// systemd's socket activation (LISTEN_FDS, LISTEN_PID, LISTEN_FDNAMES): the gatekeeper's daemon.
    package var socketActivation: SocketActivation { fields.socketActivation }

    /// The test hooks: `TestHooks.none` in release builds, which never read KEYGATE_TEST_*.
    package var testHooks: TestHooks { fields.testHooks }

    /// Every variable, as the edge found them: the whole environment of a program Keygate starts
    /// (askpass, pinentry, ssh-keygen, `keygate exec`'s command). Never looked up by name.
    package var childEnvironment: [String: String] { fields.childEnvironment }

    /// The environment of exactly `variables`, parsed (tests, and callers that run Keygate for another environment).
    public init(_ variables: [String: String]) {
        fields = Fields(variables)
    }

    /// The process's environment now, parsed: for the edges only (`EnvironmentReadTests` names them).
    /// A snapshot (`ProcessEnvironment`), reused while the environment is byte for byte the same.
    public static func process() -> KeygateEnvironment {
        let variables = ProcessEnvironment.snapshot()
        // The snapshot is the same dictionary while the environment is unchanged: parsed once for it.
        if let kept = lastParsed.withLock({ $0 }), kept.variables == variables { return kept.value }
        let value = KeygateEnvironment(variables)
        lastParsed.withLock { $0 = (variables, value) }
        return value
    }

    private static let lastParsed = Mutex<(variables: [String: String], value: KeygateEnvironment)?>(nil)

    public static func == (a: KeygateEnvironment, b: KeygateEnvironment) -> Bool {
        a.fields === b.fields || a.fields == b.fields
    }

    /// The environment for a child that must open no window of its own (ssh-keygen asked for a
    /// passphrase): every variable but the display's.
    package var childEnvironmentWithoutDisplay: [String: String] {
        childEnvironment.filter { !$0.key.hasPrefix("DISPLAY") && $0.key != "WAYLAND_DISPLAY" }
    }
}

/// KeygateEnvironment's fields, parsed once from the variables; immutable.
private final class Fields: Sendable, Equatable {
    let home: String?
    let dataHome: String?
    let configHome: String?
    let dataDirectories: [String]?
    let sessionBusAddress: String?
    let runtimeDirectory: String?
    let systemBusAddress: String
    let hasDisplay: Bool
    let store: Parsed<StoreSetting?>
    let unlockPrompt: Parsed<UnlockPromptSetting>
    let accessGroups: [String]?
    let askpass: String?
    let askpassRequirement: Parsed<AskpassRequirement>
    let pinentry: String?
    let executableSearchPath: String
    let terminalType: String
    let characterLocale: String?
    let messagesLocale: String?
    let socketActivation: SocketActivation
    let testHooks: TestHooks
    let childEnvironment: [String: String]

    init(_ variables: [String: String]) {
        func set(_ name: String) -> String? {
            guard let value = variables[name], !value.isEmpty else { return nil }
            return value
        }
        home = set("HOME")
        dataHome = set("XDG_DATA_HOME")
        configHome = set("XDG_CONFIG_HOME")
        dataDirectories = set("XDG_DATA_DIRS").map { $0.split(separator: ":").map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
        sessionBusAddress = set("DBUS_SESSION_BUS_ADDRESS")
        runtimeDirectory = set("XDG_RUNTIME_DIR")
        systemBusAddress = set("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
        hasDisplay = set("DISPLAY") != nil || set("WAYLAND_DISPLAY") != nil
        store = Self.parse("KEYGATE_STORE", set("KEYGATE_STORE"), allowed: StoreSetting.allowedText) { text in
            StoreSetting(text: text).map { Optional($0) }
        } unset: { nil }
        unlockPrompt = Self.parse(UnlockPromptSetting.variable, set(UnlockPromptSetting.variable), allowed: "auto, never") {
            UnlockPromptSetting(rawValue: $0)
        } unset: { .auto }
        accessGroups = set("KEYGATE_ACCESS_GROUPS").flatMap(Self.groups)
        askpass = set("KEYGATE_ASKPASS")
        askpassRequirement = Self.parse("KEYGATE_ASKPASS_REQUIRE", set("KEYGATE_ASKPASS_REQUIRE"), allowed: "force, prefer, never") {
            AskpassRequirement(rawValue: $0)
        } unset: { .unset }
        pinentry = set("KEYGATE_PINENTRY")
        executableSearchPath = variables["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        terminalType = variables["TERM"] ?? "dumb"
        characterLocale = set("LC_ALL") ?? set("LC_CTYPE") ?? set("LANG")
        messagesLocale = set("LC_ALL") ?? set("LC_MESSAGES") ?? set("LANG")
        socketActivation = SocketActivation(descriptors: variables["LISTEN_FDS"].flatMap { Int($0) },
                                            pid: variables["LISTEN_PID"].flatMap { Int32($0) },
                                            names: variables["LISTEN_FDNAMES"])
        testHooks = TestHooks(variables)
        childEnvironment = variables
    }

    /// KEYGATE_ACCESS_GROUPS's groups: split at commas and colons, blanks trimmed, empty ones dropped.
    private static func groups(_ raw: String) -> [String]? {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || ($0.unicodeScalars.first?.properties.generalCategory == .spaceSeparator) }
        let groups = raw.split(whereSeparator: { $0 == "," || $0 == ":" }).compactMap { part -> String? in
            guard let first = part.firstIndex(where: { !blank($0) }), let last = part.lastIndex(where: { !blank($0) }) else { return nil }
            return String(part[first...last])
        }
        return groups.isEmpty ? nil : groups
    }

    /// `text` as a setting, `unset()` when there is none, else an error naming the variable, its
    /// value and what it may be.
    private static func parse<Value>(_ name: String, _ text: String?, allowed: String, _ value: (String) -> Value?,
                                     unset: () -> Value) -> Parsed<Value> {
        guard let text else { return .value(unset()) }
        guard let parsed = value(text) else {
            return .refused(.param("\(name)=\(text) is not one of \(allowed): fix or unset it"))
        }
        return .value(parsed)
    }

    /// Every field is parsed from the variables alone: the same variables, the same fields.
    static func == (a: Fields, b: Fields) -> Bool {
        a.childEnvironment == b.childEnvironment
    }
}

/// A test's environment, written as a dictionary literal: `["HOME": "/h"]`.
extension KeygateEnvironment: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

/// A setting as the edge parsed it, or the error its text earned: thrown where the setting is used.
package enum Parsed<Value: Sendable & Equatable>: Sendable, Equatable {
    case value(Value)
    case refused(KeychainError)

    /// The setting, or the error that names the variable and what it may be.
    package func get() throws -> Value {
        switch self {
        case .value(let value): return value
        case .refused(let error): throw error
        }
    }
}

/// systemd's socket-activation variables (sd_listen_fds(3)), as the process was started with them.
package struct SocketActivation: Sendable, Equatable {
    /// LISTEN_FDS: how many descriptors, from fd 3, were passed.
    package let descriptors: Int?
    /// LISTEN_PID: the process they were passed to.
    package let pid: Int32?
    /// LISTEN_FDNAMES, as given (colon-separated names).
    package let names: String?
}
