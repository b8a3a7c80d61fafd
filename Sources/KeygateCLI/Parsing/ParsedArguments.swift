// The result of ArgumentParser.parse: which options were given, with their
// values, and the positionals. Options are looked up by their OptionSpec.

/// What a command line said, checked against a CommandConfiguration.
struct ParsedArguments: Sendable {
    /// Positionals in the order given (not counting anything after "--").
    var positionals: [String] = []
    /// Everything after the first "--", unparsed (for `keygate exec -- CMD ...`).
    var afterDoubleDash: [String] = []
    /// `-h` or `--help` appeared before "--" (and not as an option's value).
    /// When set, the parser has not reported any other mistake: show help.
    var helpRequested = false

    /// Every option occurrence in command-line order, as (key, value); a flag's value is "".
    /// For verbs whose options pair up by position (`keygate exec -s A --env X -s B --fd 3`).
    private(set) var sequence: [(key: String, value: String)] = []
    /// Option key → values in the order given; a flag has one "" per occurrence.
    private var occurrences: [String: [String]] = [:]
    /// Positional spec name → the positionals assigned to it.
    private var positionalsByName: [String: [String]] = [:]

    // Lookups take the command's OptionSpec constants, never a name in a string: a misspelt
    // option does not compile (an option the command does not declare is never given).

    /// Whether the option was given at least once. Works for value options too.
    func flag(_ option: OptionSpec) -> Bool {
        count(option) > 0
    }

    /// The option's value; the last occurrence wins. Nil when not given.
    func value(_ option: OptionSpec) -> String? {
        values(option).last
    }

    /// Every value given for the option, in order.
    func values(_ option: OptionSpec) -> [String] {
        occurrences[option.key] ?? []
    }

    /// How many times the option was given (`-v -v` gives 2).
    func count(_ option: OptionSpec) -> Int {
        values(option).count
    }

    /// The positional(s) assigned to the PositionalSpec called `name`: one
    /// for a plain positional, any number for a variadic one.
    func positionalValues(_ name: String) -> [String] {
        positionalsByName[name] ?? []
    }

    /// The positional assigned to the PositionalSpec called `name`, if given.
    func positional(_ name: String) -> String? {
        positionalValues(name).first
    }

    mutating func record(_ option: OptionSpec, value: String) {
        occurrences[option.key, default: []].append(value)
        sequence.append((option.key, value))
    }

    mutating func assign(_ values: [String], toPositional name: String) {
        positionalsByName[name] = values
    }
}
