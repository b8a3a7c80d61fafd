// A command's static description, in the spirit of swift-argument-parser's
// CommandConfiguration. ArgumentParser parses against it and HelpFormatter
// renders it; neither needs anything beyond the Swift standard library.

/// A command's name, its help text and the arguments it accepts.
struct CommandConfiguration: Sendable {
    /// The verb as typed (`get`). For the top-level command, use the program name
    /// (`keygate`): the formatters then do not repeat it.
    var commandName: String
    /// One line for OVERVIEW and for the top-level SUBCOMMANDS listing.
    var abstract: String
    /// Longer text shown under OVERVIEW. Blank lines separate paragraphs.
    var discussion: String = ""
    /// Other names for the verb, e.g. `find-generic-password` for `get`.
    var aliases: [String] = []
    /// A custom synopsis: what follows "<program> <command>" in the usage line,
    /// e.g. `"[-a account] [-s service] [-w]"`. When nil, it is generated.
    var usage: String? = nil
    var options: [OptionSpec] = []
    /// In order. Required ones come first; a variadic one, if any, comes last.
    var positionals: [PositionalSpec] = []
    /// Listed under SUBCOMMANDS in this command's help.
    var subcommands: [CommandConfiguration] = []
}

extension CommandConfiguration {
    /// Whether `name` is this command's name or one of its aliases.
    func answers(to name: String) -> Bool {
        name == commandName || aliases.contains(name)
    }

    /// The subcommand called `name` (by name or alias), if any.
    func subcommand(named name: String) -> CommandConfiguration? {
        subcommands.first { $0.answers(to: name) }
    }

    /// The names the parser treats as a help request: `-h` and `--help`, less
    /// any the configuration uses for an option of its own.
    var helpNames: [String] {
        ["-h", "--help"].filter { name in !options.contains { $0.names.contains(name) } }
    }

    /// "keygate get", or just "keygate" for the top-level command.
    func invocation(programName: String) -> String {
        if commandName.isEmpty || commandName == programName { return programName }
        return programName + " " + commandName
    }
}
