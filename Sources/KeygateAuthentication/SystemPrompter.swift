// The prompter Keygate's CLI and library use by default. It picks, per call, where
// to ask: a forced askpass program (--askpass), the user's pinentry (--pinentry or
// KEYGATE_PINENTRY), the controlling terminal, or KEYGATE_ASKPASS, following
// KEYGATE_ASKPASS_REQUIRE with the meanings of ssh's SSH_ASKPASS_REQUIRE. Delegates
// the asking to TerminalPrompter, AskpassPrompter and PinentryPrompter.
import KeygateCore

public struct SystemPrompter: Prompter {
    private let forcedAskpass: String?
    private let environment: KeygateEnvironment
    private let usePinentry: Bool

    /// askpass: the --askpass PROG option (forces askpass). environment: normally the process environment
    /// (KEYGATE_ASKPASS; KEYGATE_ASKPASS_REQUIRE=force|prefer|never with ssh's SSH_ASKPASS_REQUIRE meanings).
    /// Without a forced askpass: the controlling terminal (/dev/tty opened O_RDWR|O_NOCTTY) if there is one,
    /// else KEYGATE_ASKPASS if set, else unavailable. The askpass program runs with `environment` as its
    /// whole environment.
    /// pinentry: the --pinentry option: ask through KEYGATE_PINENTRY, else `pinentry` on PATH (Assuan
    /// protocol). KEYGATE_PINENTRY set in `environment` chooses pinentry too. A forced askpass wins.
    public init(askpass: String? = nil, environment: KeygateEnvironment, pinentry: Bool = false) {
        self.forcedAskpass = askpass
        self.environment = environment
        self.usePinentry = pinentry
    }

    public func readSecret(prompt: String) throws -> SecureBytes? {
        try chosen().readSecret(prompt: prompt)
    }

    public func notify(_ message: String) {
        (try? chosen())?.notify(message)
    }

    public func notify(_ before: String, secret: SecureBytes, _ after: String) {
        (try? chosen())?.notify(before, secret: secret, after)
    }

    public func ensureAvailable() throws {
        try chosen().ensureAvailable()
    }

    /// Where the next prompt goes.
    enum Choice: Equatable {
        case terminal
        case askpass(String)
        case pinentry(String)
    }

    /// The choice, or .interactionNotAllowed when there is none. Precedence (keygate(1),
    /// ENVIRONMENT): options before the environment, then
    /// 1. --askpass PROG; 2. --pinentry; 3. KEYGATE_ASKPASS_REQUIRE=force (KEYGATE_ASKPASS, which must
    /// be set); 4. KEYGATE_PINENTRY; 5. KEYGATE_ASKPASS_REQUIRE=prefer with KEYGATE_ASKPASS;
    /// 6. the terminal; 7. KEYGATE_ASKPASS, unless KEYGATE_ASKPASS_REQUIRE=never; 8. none: 36.
    func choice(terminalAvailable: () -> Bool) throws -> Choice {
        if let forced = forcedAskpass, !forced.isEmpty { return .askpass(forced) }
        let pinentry = environment.pinentry
        if usePinentry { return .pinentry(pinentry ?? "pinentry") }
        let askpass = environment.askpass
        let require = try environment.askpassRequirementSetting()
        if require == .force {
            guard let askpass else {
                throw KeychainError.interactionNotAllowed(
                    """
                        KEYGATE_ASKPASS_REQUIRE=force but KEYGATE_ASKPASS is not set: set KEYGATE_ASKPASS, pass --askpass PROG, or unset \
                        KEYGATE_ASKPASS_REQUIRE
                        """)
            }
            return .askpass(askpass)
        }
        if let pinentry { return .pinentry(pinentry) }
        switch require {
        case .prefer:
            if let askpass { return .askpass(askpass) }
            if terminalAvailable() { return .terminal }
        case .never:
            if terminalAvailable() { return .terminal }
            throw KeychainError.interactionNotAllowed(
                """
                    a password is needed but there is no terminal and KEYGATE_ASKPASS_REQUIRE=never forbids askpass: run from a \
                    terminal, or unset KEYGATE_ASKPASS_REQUIRE
                    """)
        case .unset, .force:
            if terminalAvailable() { return .terminal }
            if let askpass { return .askpass(askpass) }
        }
        throw KeychainError.interactionNotAllowed(PromptAdvice.noPrompt)
    }

    private func chosen() throws -> any Prompter {
        switch try choice(terminalAvailable: { TerminalPrompter.isAvailable }) {
        case .terminal: return TerminalPrompter()
        case .askpass(let program): return AskpassPrompter(program: program, environment: environment)
        case .pinentry(let program): return PinentryPrompter(program: program, environment: environment)
        }
    }
}
