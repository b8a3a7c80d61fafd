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

    /// Tokens that may be secrets, by the rules ArgumentEcho documents.
    static func possibleSecrets(_ args: [String], _ configuration: CommandConfiguration) -> [String] {
        let guarding = Set(configuration.options.filter(\.guardsNextToken).flatMap(\.names))
            .union(OptionSpec.conventionalSecretNames)
        var secrets: [String] = []
        for (index, token) in args.enumerated() {
            if index > 0, guarding.contains(args[index - 1]) { secrets.append(token) }
            if token.hasPrefix("--password=") { secrets.append(String(token.dropFirst("--password=".count))) }
            for name in guarding where name.count == 2 && configuration.options.contains(where: { $0.names.contains(name) })
                && token.hasPrefix(name) && token.count > 2 {
                secrets.append(String(token.dropFirst(2)))
            }
        }
        return secrets
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
            for name in option.names {
                _ = parsed.flag(name)
                _ = parsed.value(name)
                require(parsed.values(name).count == parsed.count(name), "values and count disagree for \(name)")
            }
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
        let others = args.joined(separator: "\u{0}")
        let optionNames = configuration.options.flatMap(\.names) + ["--help", "--version", "--verbose", "--askpass", "--pinentry"]
        for secret in CLIFuzz.possibleSecrets(args, configuration) where secret.count >= 8 {
            // Skip a token that also appears as part of another argument, of the usage line, or of
            // an option name the message suggests ("--verbos" is inside "did you mean '--verbose'?").
            let elsewhere = others.ranges(of: secret).count > 1 || error.usage.contains(secret)
                || optionNames.contains { $0.contains(secret) }
            require(elsewhere || !error.message.contains(secret), "a usage error repeats a possible secret: \(error.message)")
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
