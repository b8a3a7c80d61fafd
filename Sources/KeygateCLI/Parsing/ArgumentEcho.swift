// Decides whether an error message may quote an argument the user typed. A
// stray argument can be a password (`find-generic-password -w hunter2`, where
// -w is a flag), so quoting is the exception, not the rule.

/// The rule for quoting user input in usage errors.
///
/// Choice (per the CLI brief): a token is quoted only when it is shorter than
/// 40 characters, holds no control characters (no terminal escapes), and the
/// token before it was not `-w`, `--password` or an option marked `secret`.
/// Otherwise the message gives only its length: "(57 characters, not shown)".
/// Option values are never quoted at all: messages name the option only.
enum ArgumentEcho {
    static let maximumQuotedLength = 40

    static func mayQuote(_ token: String, previous: String?, configuration: CommandConfiguration) -> Bool {
        if token.count >= maximumQuotedLength { return false }
        if token.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) { return false }
        guard let previous else { return true }
        if OptionSpec.conventionalSecretNames.contains(previous) { return false }
        if previous.hasPrefix("--password=") { return false }
        let guarding = configuration.options.contains { $0.guardsNextToken && $0.names.contains(previous) }
        return !guarding
    }

    /// "'x'" when it may be quoted, else "(N characters, not shown)".
    static func describe(_ token: String, previous: String?, configuration: CommandConfiguration) -> String {
        if mayQuote(token, previous: previous, configuration: configuration) {
            return "'\(token)'"
        }
        let n = token.count
        return "(\(n) character\(n == 1 ? "" : "s"), not shown)"
    }
}
