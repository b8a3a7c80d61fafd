// Parses a command's arguments against its CommandConfiguration into
// ParsedArguments, or a UsageError. Plain standard library, no Foundation, so
// the CLI starts in a few milliseconds. Quoting of user input in errors is
// delegated to ArgumentEcho, "did you mean" hints to NameSuggestion.
//
// Rules (macOS `security` style):
// - Options by any of their names: `-s S`, `--service S`, `--service=S`.
// - Short options are not bundled: `-Uw` is an error, write `-U -w`.
// - A value option takes the next token even when it starts with '-'
//   (`-a -x` is account "-x"), except "--", which always ends the options:
//   `-s --` is "option -s needs a value". Use `--service=--` for that value.
// - An optional-value option (`-w [password]`) takes the next token, whatever it is, except
//   "--"; given last, its value is "".
// - "--" ends the options; everything after it goes to afterDoubleDash.
// - "-" alone is a positional.
// - `-h` / `--help` set helpRequested (each unless the configuration defines it);
//   once help is requested no other mistake is reported.
// - Options and positionals may be mixed in any order.

enum ArgumentParser {
    /// Parses argv (without the program and command names) against the configuration.
    static func parse(
        _ arguments: [String],
        for configuration: CommandConfiguration
    ) throws(UsageError) -> ParsedArguments {
        try parse(arguments, for: configuration, programName: "keygate")
    }

    /// As above; `programName` goes into the UsageError's usage line.
    static func parse(
        _ arguments: [String],
        for configuration: CommandConfiguration,
        programName: String
    ) throws(UsageError) -> ParsedArguments {
        var parser = Run(arguments: arguments, configuration: configuration)
        parser.scan()
        if parser.result.helpRequested { return parser.result }
        if let message = parser.firstProblem ?? parser.assignPositionals() {
            throw UsageError(message, for: configuration, programName: programName)
        }
        return parser.result
    }

    /// Parses the options before the verb (`keygate --askpass P --verbose get ...`) against the top-level
    /// configuration: scanning stops at the first token that is not an option (the verb, or "--", or "-"),
    /// which starts `rest`. Help is not special here: the top-level configuration declares -h/--help.
    static func parseLeadingOptions(
        _ arguments: [String],
        for configuration: CommandConfiguration,
        programName: String
    ) throws(UsageError) -> (options: ParsedArguments, rest: [String]) {
        var parser = Run(arguments: arguments, configuration: configuration)
        let end = parser.scan(stoppingAtFirstPositional: true)
        if let message = parser.firstProblem {
            throw UsageError(message, for: configuration, programName: programName)
        }
        return (parser.result, Array(arguments[end...]))
    }

    /// One pass over one argument list.
    private struct Run {
        let arguments: [String]
        let configuration: CommandConfiguration
        var result: ParsedArguments
        /// The first mistake, in argument order. Scanning goes on after it so
        /// that a later `--help` still wins.
        var firstProblem: String?
        /// Index in `arguments` of each positional, to judge whether it may be quoted.
        var positionalIndices: [Int] = []
        let optionsByName: [String: OptionSpec]

        init(arguments: [String], configuration: CommandConfiguration) {
            self.arguments = arguments
            self.configuration = configuration
            self.result = ParsedArguments()
            var byName: [String: OptionSpec] = [:]
            for option in configuration.options {
                for name in option.names where byName[name] == nil {
                    byName[name] = option
                }
            }
            self.optionsByName = byName
        }

        mutating func report(_ message: String) {
            if firstProblem == nil { firstProblem = message }
        }

        /// Scans the arguments; returns the index it stopped at (the count, unless
        /// `stoppingAtFirstPositional` stopped it at "--", "-" or a positional).
        @discardableResult
        mutating func scan(stoppingAtFirstPositional: Bool = false) -> Int {
            var index = 0
            while index < arguments.count {
                let token = arguments[index]
                if stoppingAtFirstPositional, token == "--" || token == "-" || !token.hasPrefix("-") {
                    return index
                }
                index += 1
                if token == "--" {
                    result.afterDoubleDash = Array(arguments[index...])
                    return arguments.count
                }
                if token == "-" || !token.hasPrefix("-") {
                    result.positionals.append(token)
                    positionalIndices.append(index - 1)
                    continue
                }
                index = option(token, at: index - 1)
            }
            return arguments.count
        }

        /// Handles the option token at `position`; returns the index to continue from.
        mutating func option(_ token: String, at position: Int) -> Int {
            var name = token
            var inlineValue: String? = nil
            if optionsByName[token] == nil, token.hasPrefix("--"), let equals = token.firstIndex(of: "=") {
                name = String(token[..<equals])
                inlineValue = String(token[token.index(after: equals)...])
            }
            guard let spec = optionsByName[name] else {
                if configuration.helpNames.contains(name) {
                    result.helpRequested = true
                } else {
                    report(unknownOption(token, name: name, hasInlineValue: inlineValue != nil, at: position))
                }
                return position + 1
            }
            if case .optionalValue = spec.kind, inlineValue == nil {
                let next = position + 1
                guard next < arguments.count, arguments[next] != "--" else {
                    result.record(spec, value: "")
                    return next
                }
                result.record(spec, value: arguments[next])
                return next + 1
            }
            guard spec.takesValue else {
                if inlineValue != nil {
                    report("option \(name) does not take a value")
                } else {
                    result.record(spec, value: "")
                }
                return position + 1
            }
            if let inlineValue {
                result.record(spec, value: inlineValue)
                return position + 1
            }
            let next = position + 1
            guard next < arguments.count, arguments[next] != "--" else {
                report("option \(name) needs a value")
                return next
            }
            result.record(spec, value: arguments[next])
            return next + 1
        }

        func unknownOption(_ token: String, name: String, hasInlineValue: Bool, at position: Int) -> String {
            // "-service" for "--service": the token is a known name, not a secret.
            if !token.hasPrefix("--"), !hasInlineValue, optionsByName["-" + token] != nil {
                return "unknown option '\(token)' (did you mean '-\(token)'?)"
            }
            // "-wSECRET" or "-Uw": a known short option with something glued on.
            // Never quote the rest: it may be a password.
            if !token.hasPrefix("--"), token.count > 2 {
                let short = String(token.prefix(2))
                if let spec = optionsByName[short] {
                    if spec.takesValue {
                        return "option \(short) must be separated from its value: write '\(short) VALUE'"
                    }
                    return "unknown option starting with \(short): short options cannot be combined; write each one separately"
                }
            }
            let previous = position > 0 ? arguments[position - 1] : nil
            // With "--name=value", only the name is ever shown.
            let shown = hasInlineValue ? name : token
            guard ArgumentEcho.mayQuote(shown, previous: previous, configuration: configuration) else {
                return "unknown option \(ArgumentEcho.describe(shown, previous: previous, configuration: configuration))"
            }
            var candidates = configuration.options.flatMap(\.names)
            candidates += configuration.helpNames
            if let suggestion = NameSuggestion.closest(to: name, among: candidates) {
                return "unknown option '\(shown)' (did you mean '\(suggestion)'?)"
            }
            return "unknown option '\(shown)'"
        }

        /// Assigns positionals to their specs in order; returns a mistake, if any.
        mutating func assignPositionals() -> String? {
            let specs = configuration.positionals
            var next = 0
            var missing: PositionalSpec? = nil
            for spec in specs {
                let available = result.positionals.count - next
                let take = spec.variadic ? available : min(available, 1)
                if take == 0, !spec.optional, missing == nil { missing = spec }
                result.assign(Array(result.positionals[next..<(next + take)]), toPositional: spec.name)
                next += take
            }
            if next < result.positionals.count {
                let position = positionalIndices[next]
                let previous = position > 0 ? arguments[position - 1] : nil
                let shown = ArgumentEcho.describe(arguments[position], previous: previous, configuration: configuration)
                return "unexpected argument \(shown)"
            }
            if let missing {
                return "missing argument <\(missing.name)>"
            }
            return nil
        }
    }
}
