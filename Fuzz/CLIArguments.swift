// Fuzz harness for the CLI's argument parser (Sources/KeygateCLI/Parsing): the first
// byte picks a command configuration (every verb, its subcommands, and the top level),
// the rest, split at NUL bytes, is argv (invalid UTF-8 replaced, as the CLI sees it).
// Invariants: parsing never crashes and is deterministic; a usage error has a message
// and a usage line; an error never repeats a token that may be a password (the one
// after -w, --password or a secret option, or glued to them: -wSECRET, --password=S);
// help and usage lines render for every configuration. Delegates to ArgumentParser,
// ParsedArguments, HelpFormatter and the verbs' configurations (nothing is run).
@testable import KeygateCLI

enum CLIFuzz {
    static let configurations: [CommandConfiguration] = {
        var all = [KeygateMain.topLevel]
        for command in KeygateMain.commands {
            all.append(command.configuration)
            all += command.configuration.subcommands
        }
        return all
    }()

    /// Where a secret may be, by the rules ArgumentEcho documents: the argument's index and how
    /// many of its characters come before the secret ("-wSECRET": 2, "--password=S": 11).
    static func secretPositions(_ args: [String], _ configuration: CommandConfiguration) -> [(index: Int, prefix: Int)] {
        let guarding = Set(configuration.options.filter(\.guardsNextToken).flatMap(\.names))
            .union(OptionSpec.conventionalSecretNames)
        var positions: [(index: Int, prefix: Int)] = []
        for (index, token) in args.enumerated() {
            if index > 0, guarding.contains(args[index - 1]) { positions.append((index, 0)) }
            if token.hasPrefix("--password=") { positions.append((index, "--password=".count)) }
            for name in guarding where name.count == 2 && configuration.options.contains(where: { $0.names.contains(name) })
                && token.hasPrefix(name) && token.count > 2 {
                positions.append((index, 2))
            }
        }
        return positions
    }

    /// The marker that stands in for a secret's characters.
    static let marker: Character = "\u{A7}"

    /// `token` with every character after `prefix` that is not a dash or '=' replaced by the
    /// marker: the same shape for the parser (an option stays an option), and any echo of it
    /// shows.
    static func masked(_ token: String, after prefix: Int) -> String {
        String(token.prefix(prefix)) + String(token.dropFirst(prefix).map { $0 == "-" || $0 == "=" ? $0 : marker })
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCLIArguments(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let configuration = CLIFuzz.configurations[input.int(below: CLIFuzz.configurations.count)]
    let args = input.rest().split(separator: 0, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }

    let first: Result<ParsedArguments, UsageError> = Result { () throws(UsageError) in try ArgumentParser.parse(args, for: configuration) }
    let second: Result<ParsedArguments, UsageError> = Result { () throws(UsageError) in try ArgumentParser.parse(args, for: configuration) }
    if case .failure = first { FuzzStats.record(refused: true) } else { FuzzStats.record(refused: false) }
    switch (first, second) {
    case (.success(let parsed), .success(let again)):
        require(parsed.positionals == again.positionals && parsed.afterDoubleDash == again.afterDoubleDash
                && parsed.helpRequested == again.helpRequested, "parsing is not deterministic")
        for option in configuration.options {
            _ = parsed.flag(option)
            _ = parsed.value(option)
            require(parsed.values(option).count == parsed.count(option), "values and count disagree for \(option.names)")
        }
        for positional in configuration.positionals {
            _ = parsed.positionalValues(positional.name)
            _ = parsed.positional(positional.name)
        }
        if let dash = args.firstIndex(of: "--") {
            require(parsed.helpRequested || parsed.afterDoubleDash == Array(args[(dash + 1)...]), "arguments after -- were lost")
        }
    case (.failure(let error), .failure(let again)):
        require(error == again, "errors are not deterministic")
        require(!error.message.isEmpty && !error.usage.isEmpty, "a usage error without a message or usage line")
        // A secret is echoed when the message changes with it: parse again with the secret's
        // characters masked, and look for the marker. (A message may contain the same text for
        // another reason: another argument, a suggested option name, the usage line.)
        guard !args.contains(where: { $0.contains(CLIFuzz.marker) }) else { break }
        for (index, prefix) in CLIFuzz.secretPositions(args, configuration) where args[index].count - prefix >= 8 {
            // Cheap first: only a message that contains the secret's text needs the second parse.
            guard error.message.contains(String(args[index].dropFirst(prefix))) else { continue }
            var masked = args
            masked[index] = CLIFuzz.masked(args[index], after: prefix)
            let outcome: Result<ParsedArguments, UsageError> = Result { () throws(UsageError) in
                try ArgumentParser.parse(masked, for: configuration)
            }
            if case .failure(let maskedError) = outcome {
                require(!maskedError.message.contains(CLIFuzz.marker),
                        "a usage error repeats a possible secret: \(maskedError.message)")
            }
        }
    default:
        require(false, "parsing the same arguments twice gave different outcomes")
    }
    if size < 2 {
        _ = HelpFormatter.help(for: configuration, programName: "keygate")
        _ = HelpFormatter.usageLine(for: configuration, programName: "keygate")
    }
    return 0
}
