// Finds mistakes in a CommandConfiguration itself (not in a command line):
// duplicate or malformed option names, misordered positionals. Meant for a
// test over every command, so a bad configuration never ships; the parser
// itself never traps on one.

extension CommandConfiguration {
    /// What is wrong with this configuration and its subcommands; empty when fine.
    var configurationProblems: [String] {
        var problems: [String] = []
        var seen: Set<String> = []
        for option in options {
            if option.names.isEmpty {
                problems.append("\(commandName): an option has no names")
            }
            for name in option.names {
                if !name.hasPrefix("-") || name == "-" || name == "--" || name.contains("=") || name.contains(" ") {
                    problems.append("\(commandName): '\(name)' is not a valid option name")
                }
                if !seen.insert(name).inserted {
                    problems.append("\(commandName): option name \(name) is used twice")
                }
            }
        }
        var sawOptional = false
        for (index, positional) in positionals.enumerated() {
            if positional.variadic, index != positionals.count - 1 {
                problems.append("\(commandName): variadic <\(positional.name)> must be the last positional")
            }
            if !positional.optional, sawOptional {
                problems.append("\(commandName): required <\(positional.name)> follows an optional positional")
            }
            sawOptional = sawOptional || positional.optional
        }
        for subcommand in subcommands {
            problems += subcommand.configurationProblems
        }
        return problems
    }
}
