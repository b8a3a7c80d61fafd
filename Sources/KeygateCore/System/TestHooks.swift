// The test suite's hooks (KEYGATE_TEST_*): a cheap Argon2id cost, PAM, policy, gatekeeper and
// host-key folders in temporary places, short windows and lockouts, a private system bus. Debug
// builds, the ones the suite runs, parse them here into typed fields; release builds compile the
// parsing out, so their hooks are always `TestHooks.none` and no installed binary can be talked
// into a weaker configuration through its environment. This file is the one place the build
// flag KEYGATE_TEST_HOOKS decides a hook (`TestHookRuleTests` holds the sources to it); what
// differs between the builds elsewhere asks `TestHooks.compiledIn`, a constant.
//
// A hook whose value cannot be used (KEYGATE_TEST_LOCK_AFTER=soon, a relative folder) is an error
// that names it, thrown by the first operation that reads the hooks (`refused`).

package struct TestHooks: Sendable, Equatable {
    /// KEYGATE_TEST_GATEKEEPER: the setuid helper to run (tried before the installed one).
    package private(set) var gatekeeper: String?
    /// KEYGATE_TEST_GATE_DIR (absolute): root's gatekeeper state, records and audit log below it.
    package private(set) var gateDirectory: String?
    /// KEYGATE_TEST_POLICY_ROOT (absolute): the vendor, admin and user policy folders below it.
    package private(set) var policyRoot: String?
    /// KEYGATE_TEST_HOST_KEY (absolute): the host key's file.
    package private(set) var hostKey: String?
    /// KEYGATE_TEST_TCTI: the TPM's TCTI configuration (a software TPM).
    package private(set) var tcti: String?
    /// KEYGATE_TEST_REFUSE_PROMPTS=1: dismiss every Secret Service prompt at once.
    package private(set) var refusePrompts = false
    /// KEYGATE_TEST_FPRINT_DIR (absolute): fprintd's folder of enrolled prints.
    package private(set) var fprintDirectory: String?
    /// KEYGATE_TEST_PAM_CONFDIR: a folder of PAM service files instead of /etc/pam.d.
    package private(set) var pamConfdir: String?
    /// KEYGATE_TEST_KDF=fast: the cheap Argon2id cost for new password protectors.
    package private(set) var fastKDF = false
    /// KEYGATE_TEST_STORE_DEADLINE (seconds): how long a Secret Service call may take.
    package private(set) var storeDeadline: Duration?
    /// KEYGATE_TEST_SYSTEM_BUS: the gatekeeper's private system bus (scripts/fprint-session).
    package private(set) var systemBus: String?
    /// KEYGATE_TEST_LOCK_AFTER, _REUSE_DURATION, _REUSE_SCOPE, _LOCKOUT_SECONDS, _FINGER_UNLOCK, and
    /// _CERTIFY_WINDOW (the gatekeeper's "a password within the last minute", shortened).
    package private(set) var overrides = TestOverrides()
    /// Every KEYGATE_TEST_* variable as given: what the gatekeeper passes on to the daemon it starts.
    package private(set) var variables: [String: String] = [:]
    /// The first hook whose value was refused, as an error naming it.
    package private(set) var refused: KeychainError?

    /// No hooks: release builds' only value.
    package static let none = TestHooks()

    private init() {}

    /// What tells one test daemon from another: every hook as `NAME=value`, sorted, one a line,
    /// except where the client finds the helper (it does not change what a daemon answers, so a
    /// test can take the helper away and still reach its daemon); nil with no hooks.
    package var daemonIdentity: String? {
        guard TestHooks.compiledIn else { return nil }
        return variables.filter { $0.key != "KEYGATE_TEST_GATEKEEPER" }.map { $0.key + "=" + $0.value }
            .sorted().joined(separator: "\n")
    }

    /// Throws the first refused hook (an operation about to use the hooks calls it).
    package func check() throws {
        if let refused { throw refused }
    }
}

#if KEYGATE_TEST_HOOKS
extension TestHooks {
    /// True in test-hook (debug) builds.
    package static let compiledIn = true

    /// The KEYGATE_TEST_* variables among `environment`, parsed.
    package init(_ environment: [String: String]) {
        self.init()
        variables = environment.filter { $0.key.hasPrefix("KEYGATE_TEST_") }
        guard !variables.isEmpty else { return }
        func set(_ name: String) -> String? {
            guard let value = variables[name], !value.isEmpty else { return nil }
            return value
        }
        func refuse(_ name: String, _ value: String, _ wanted: String) {
            if refused == nil { refused = .param("\(name)=\(value) is not \(wanted): fix or unset it (a test hook)") }
        }
        func folder(_ name: String) -> String? {
            guard let value = set(name) else { return nil }
            guard value.hasPrefix("/") else {
                refuse(name, value, "an absolute path")
                return nil
            }
            return value
        }
        func seconds(_ name: String) -> UInt32? {
            guard let value = set(name) else { return nil }
            guard let number = UInt32(value) else {
                refuse(name, value, "a whole number of seconds")
                return nil
            }
            return number
        }
        func flag(_ name: String, on: String) -> Bool {
            guard let value = set(name) else { return false }
            guard value == on else {
                refuse(name, value, "\"\(on)\"")
                return false
            }
            return true
        }
        gatekeeper = set("KEYGATE_TEST_GATEKEEPER")
        gateDirectory = folder("KEYGATE_TEST_GATE_DIR")
        policyRoot = folder("KEYGATE_TEST_POLICY_ROOT")
        hostKey = folder("KEYGATE_TEST_HOST_KEY")
        tcti = set("KEYGATE_TEST_TCTI")
        refusePrompts = flag("KEYGATE_TEST_REFUSE_PROMPTS", on: "1")
        fprintDirectory = folder("KEYGATE_TEST_FPRINT_DIR")
        pamConfdir = set("KEYGATE_TEST_PAM_CONFDIR")
        fastKDF = flag("KEYGATE_TEST_KDF", on: "fast")
        storeDeadline = seconds("KEYGATE_TEST_STORE_DEADLINE").map { .seconds(Int($0)) }
        systemBus = set("KEYGATE_TEST_SYSTEM_BUS")
        overrides.lockAfter = seconds("KEYGATE_TEST_LOCK_AFTER")
        overrides.reuseDuration = seconds("KEYGATE_TEST_REUSE_DURATION")
        if let scope = set("KEYGATE_TEST_REUSE_SCOPE") {
            overrides.reuseScope = ReuseScope.Kind(rawValue: scope)
            if overrides.reuseScope == nil {
                refuse("KEYGATE_TEST_REUSE_SCOPE", scope, "one of " + ReuseScope.Kind.allCases.map(\.rawValue).joined(separator: ", "))
            }
        }
        overrides.lockoutSeconds = seconds("KEYGATE_TEST_LOCKOUT_SECONDS")
        overrides.fingerUnlock = seconds("KEYGATE_TEST_FINGER_UNLOCK")
        overrides.certifyWindow = seconds("KEYGATE_TEST_CERTIFY_WINDOW")
    }
}
#else
extension TestHooks {
    /// False in release builds: no hook is read.
    package static let compiledIn = false

    /// Release builds read no KEYGATE_TEST_* variable: always `none`.
    package init(_ environment: [String: String]) {
        self.init()
    }
}
#endif
