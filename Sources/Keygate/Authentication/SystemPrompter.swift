// The prompter Keygate's CLI and library use by default. It picks, per call, where
// to ask: a forced askpass program (--askpass), the controlling terminal, or
// KEYGATE_ASKPASS, following KEYGATE_ASKPASS_REQUIRE with the meanings of ssh's
// SSH_ASKPASS_REQUIRE. Delegates the asking to TerminalPrompter and AskpassPrompter.

public struct SystemPrompter: Prompter {
    private let forcedAskpass: String?
    private let environment: [String: String]

    /// askpass: the --askpass PROG option (forces askpass). environment: normally the process environment
    /// (KEYGATE_ASKPASS; KEYGATE_ASKPASS_REQUIRE=force|prefer|never with ssh's SSH_ASKPASS_REQUIRE meanings).
    /// Without a forced askpass: the controlling terminal (/dev/tty opened O_RDWR|O_NOCTTY) if there is one,
    /// else KEYGATE_ASKPASS if set, else unavailable. The askpass program runs with `environment` as its
    /// whole environment.
    public init(askpass: String? = nil, environment: [String: String]) {
        self.forcedAskpass = askpass
        self.environment = environment
    }

    public func readSecret(prompt: String) throws -> SecureBytes? {
        try chosen().readSecret(prompt: prompt)
    }

    public func notify(_ message: String) {
        (try? chosen())?.notify(message)
    }

    public func ensureAvailable() throws {
        try chosen().ensureAvailable()
    }

    /// Where the next prompt goes.
    enum Choice: Equatable {
        case terminal
        case askpass(String)
    }

    /// The choice, or .interactionNotAllowed when there is none.
    func choice(terminalAvailable: () -> Bool) throws -> Choice {
        if let forced = forcedAskpass, !forced.isEmpty { return .askpass(forced) }
        let askpass = environment["KEYGATE_ASKPASS"].flatMap { $0.isEmpty ? nil : $0 }
        switch environment["KEYGATE_ASKPASS_REQUIRE"] ?? "" {
        case "force":
            guard let askpass else {
                throw KeychainError.interactionNotAllowed(
                    "KEYGATE_ASKPASS_REQUIRE=force but KEYGATE_ASKPASS is not set: set KEYGATE_ASKPASS, pass --askpass PROG, or unset KEYGATE_ASKPASS_REQUIRE")
            }
            return .askpass(askpass)
        case "prefer":
            if let askpass { return .askpass(askpass) }
            if terminalAvailable() { return .terminal }
        case "never":
            if terminalAvailable() { return .terminal }
            throw KeychainError.interactionNotAllowed(
                "a password is needed but there is no terminal and KEYGATE_ASKPASS_REQUIRE=never forbids askpass: run from a terminal, or unset KEYGATE_ASKPASS_REQUIRE")
        default:
            if terminalAvailable() { return .terminal }
            if let askpass { return .askpass(askpass) }
        }
        throw KeychainError.interactionNotAllowed(PromptAdvice.noPrompt)
    }

    private func chosen() throws -> any Prompter {
        switch try choice(terminalAvailable: { TerminalPrompter.isAvailable }) {
        case .terminal: return TerminalPrompter()
        case .askpass(let program): return AskpassPrompter(program: program, environment: environment)
        }
    }
}
