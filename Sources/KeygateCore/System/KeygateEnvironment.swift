// The one configuration value Keygate takes from its process environment (issue 37, part 4):
// built once at an edge (the CLI's main, the public `Keychain` and `KeychainOperations`, the
// Apple layer's configuration, the PAM helper's and the gatekeeper's mains) and passed down as
// a value. The layers below read their variables from it, never from the process: what a
// layer sees is what its caller gave it, and a test builds one from a dictionary.
// `EnvironmentReadTests` fails on a read of the process environment outside the edges.
//
// Test hooks: `testHook(_:)` gives a KEYGATE_TEST_* variable in test-hook builds only; release
// builds compile it to nil, so no installed binary can be redirected through its environment.
// Where a hook was honoured before this value existed, it is honoured under the same conditions
// (each caller keeps its own checks: an absolute path, a non-empty value).

public struct KeygateEnvironment: Sendable, Equatable {
    /// Every variable, as the edge found them (name to value).
    public let variables: [String: String]

    /// An environment of exactly `variables` (tests, and callers that run Keygate for another environment).
    public init(_ variables: [String: String]) {
        self.variables = variables
    }

    /// The process's environment now: for the edges only (`EnvironmentReadTests` names them).
    /// A snapshot (`ProcessEnvironment`), reused while the environment is byte for byte the same.
    public static func process() -> KeygateEnvironment {
        KeygateEnvironment(ProcessEnvironment.snapshot())
    }

    /// The variable `name`, or nil when it is not set.
    public subscript(name: String) -> String? { variables[name] }

    /// The variable `name` when it is set and not empty.
    package func nonEmpty(_ name: String) -> String? {
        guard let value = variables[name], !value.isEmpty else { return nil }
        return value
    }

    /// The test hook `name` (a KEYGATE_TEST_* variable) in test-hook builds; always nil in release builds.
    package func testHook(_ name: String) -> String? {
        #if KEYGATE_TEST_HOOKS
        return variables[name]
        #else
        return nil
        #endif
    }

    /// The test hook `name` when it holds an absolute path (test-hook builds only).
    package func testHookPath(_ name: String) -> String? {
        guard let value = testHook(name), value.hasPrefix("/") else { return nil }
        return value
    }

    /// Every KEYGATE_TEST_* variable (test-hook builds; empty in release builds).
    package var testHooks: [String: String] {
        #if KEYGATE_TEST_HOOKS
        return variables.filter { $0.key.hasPrefix("KEYGATE_TEST_") }
        #else
        return [:]
        #endif
    }

    // MARK: The variables the layers read

    /// Whether a window can be shown: DISPLAY or WAYLAND_DISPLAY is set and not empty.
    package var hasDisplay: Bool {
        nonEmpty("DISPLAY") != nil || nonEmpty("WAYLAND_DISPLAY") != nil
    }

    /// DBUS_SESSION_BUS_ADDRESS when set and not empty.
    package var sessionBusAddress: String? { nonEmpty("DBUS_SESSION_BUS_ADDRESS") }

    /// XDG_RUNTIME_DIR when set and not empty.
    package var runtimeDirectory: String? { nonEmpty("XDG_RUNTIME_DIR") }

    /// DBUS_SYSTEM_BUS_ADDRESS, else the system bus's standard socket.
    package var systemBusAddress: String {
        nonEmpty("DBUS_SYSTEM_BUS_ADDRESS") ?? "unix:path=/run/dbus/system_bus_socket"
    }
}
