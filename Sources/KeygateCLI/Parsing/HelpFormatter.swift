// Renders a CommandConfiguration as help text (OVERVIEW, USAGE, OPTIONS,
// POSITIONAL ARGUMENTS, SUBCOMMANDS) and as a one-line usage. Wrapping and
// column layout are delegated to TextLayout.

enum HelpFormatter {
    /// Labels up to this long share the help column; longer ones get their own line.
    static let maximumLabelWidth = 26
    /// The help line shown for the `-h, --help` the parser recognises.
    static let helpOptionHelp = "Show help information."

    /// OVERVIEW, USAGE, OPTIONS, (POSITIONAL ARGUMENTS), SUBCOMMANDS sections,
    /// aligned columns, wrapped at 80. No trailing newline.
    static func help(for configuration: CommandConfiguration, programName: String) -> String {
        var sections: [[String]] = []

        var overview: [String] = []
        if !configuration.abstract.isEmpty {
            overview += TextLayout.wrapText(configuration.abstract, firstPrefix: "OVERVIEW: ", indent: 2)
        }
        if !configuration.discussion.isEmpty {
            if !overview.isEmpty { overview.append("") }
            overview += TextLayout.wrapText(configuration.discussion, firstPrefix: "", indent: 0)
        }
        if !overview.isEmpty { sections.append(overview) }

        sections.append(usageLines(for: configuration, programName: programName))

        let options = optionRows(for: configuration)
        let positionals = configuration.positionals.map { (label: "<\($0.name)>", help: $0.help) }
        let subcommands = configuration.subcommands.map { command in
            (label: ([command.commandName] + command.aliases).joined(separator: ", "), help: command.abstract)
        }
        let labels = (options + positionals + subcommands).map(\.label.count).filter { $0 <= maximumLabelWidth }
        let column = 2 + (labels.max() ?? 0) + 2

        func section(_ title: String, _ rows: [(label: String, help: String)]) -> [String] {
            [title] + rows.flatMap { TextLayout.row(label: $0.label, help: $0.help, column: column) }
        }
        if !options.isEmpty { sections.append(section("OPTIONS:", options)) }
        if !positionals.isEmpty { sections.append(section("POSITIONAL ARGUMENTS:", positionals)) }
        if !subcommands.isEmpty {
            var lines = section("SUBCOMMANDS:", subcommands)
            let invocation = configuration.invocation(programName: programName)
            lines += ["", "  See '\(invocation) <subcommand> --help' for detailed help."]
            sections.append(lines)
        }
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n")
    }

    /// "keygate get [-s <service>] [-w] <name>" on one line, without a "USAGE:" prefix.
    static func usageLine(for configuration: CommandConfiguration, programName: String) -> String {
        ([configuration.invocation(programName: programName)] + synopsis(for: configuration)).joined(separator: " ")
    }

    /// The USAGE section: wrapped at 80, later lines aligned after the command name.
    static func usageLines(for configuration: CommandConfiguration, programName: String) -> [String] {
        let invocation = configuration.invocation(programName: programName)
        let prefix = "USAGE: " + invocation + " "
        let indent = prefix.count <= 40 ? prefix.count : 7
        let units = synopsis(for: configuration)
        if units.isEmpty { return ["USAGE: " + invocation] }
        return TextLayout.wrap(units, firstPrefix: prefix, indent: indent)
    }

    /// The unbreakable elements after the invocation: "[-s <service>]", "<name>", ...
    static func synopsis(for configuration: CommandConfiguration) -> [String] {
        if let custom = configuration.usage {
            return bracketGroups(custom)
        }
        var units: [String] = configuration.options.map { option in
            let name = option.names.first ?? ""
            switch option.kind {
            case .flag: return "[\(name)]"
            case .value(let valueName): return "[\(name) <\(valueName)>]"
            case .repeatedValue(let valueName): return "[\(name) <\(valueName)> ...]"
            case .optionalValue(let valueName): return "[\(name) [<\(valueName)>]]"
            }
        }
        for positional in configuration.positionals {
            let core = "<\(positional.name)>" + (positional.variadic ? " ..." : "")
            units.append(positional.optional ? "[\(core)]" : core)
        }
        if configuration.positionals.isEmpty, !configuration.subcommands.isEmpty {
            units.append("<subcommand>")
        }
        return units
    }

    /// Splits a custom synopsis at spaces outside brackets, so that
    /// "[-a account]" never breaks across lines.
    static func bracketGroups(_ text: String) -> [String] {
        var units: [String] = []
        var current = ""
        var depth = 0
        for character in text {
            switch character {
            case "[", "(", "<": depth += 1
            case "]", ")", ">": depth = max(0, depth - 1)
            default: break
            }
            if character == " ", depth == 0 {
                if !current.isEmpty { units.append(current) }
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { units.append(current) }
        return units
    }

    /// Option rows, with the recognised `-h, --help` last.
    static func optionRows(for configuration: CommandConfiguration) -> [(label: String, help: String)] {
        var rows = configuration.options.map { option in
            var label = option.names.joined(separator: ", ")
            if case .optionalValue(let valueName) = option.kind {
                label += " [<\(valueName)>]"
            } else if let valueName = option.valueName {
                label += " <\(valueName)>"
            }
            if option.isRepeated { label += " ..." }
            return (label: label, help: option.help)
        }
        let helpNames = configuration.helpNames
        if !helpNames.isEmpty {
            rows.append((label: helpNames.joined(separator: ", "), help: helpOptionHelp))
        }
        return rows
    }
}
