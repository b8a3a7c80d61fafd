// The error for a command line that does not fit its configuration. The CLI
// prints the message and the usage line and exits 2. Messages never carry an
// argument that might be a secret (see ArgumentEcho).

/// A mistake on the command line, with the usage line to show beside it.
struct UsageError: Error, Sendable, Equatable {
    /// What was wrong, e.g. "option --service needs a value".
    var message: String
    /// The usage line without a "USAGE:" prefix, e.g. "keygate get [-s <service>]".
    var usage: String
}

extension UsageError: CustomStringConvertible {
    /// A usage error for `configuration`, for commands that validate their own
    /// arguments after parsing ("give -s or -a, not both").
    init(_ message: String, for configuration: CommandConfiguration, programName: String = "keygate") {
        self.init(
            message: message,
            usage: HelpFormatter.usageLine(for: configuration, programName: programName)
        )
    }

    var description: String {
        "error: \(message)\nUSAGE: \(usage)"
    }
}
