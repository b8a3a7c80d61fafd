// The CLI's entry point: picks the verb (macOS `security` spellings included),
// parses its options, runs it, and turns errors into messages and exit codes:
// KeychainError exits with its OSStatus & 0xFF, a usage error with 2.

import Keygate

public enum KeygateMain {
    public static let version = "0.1.0"

    /// The verbs, in the order `keygate help` lists them.
    static let commands: [any KeygateCommand.Type] = [
        InitCommand.self, AddCommand.self, GetCommand.self, FindCommand.self, DeleteCommand.self, DeletePasswordCommand.self,
        ListCommand.self, DumpKeychainCommand.self, ExistsCommand.self, UnlockCommand.self, LockCommand.self, ValidateCommand.self, StatusCommand.self,
        PasswdCommand.self, SetupHostCommand.self, PolicyCommand.self, DoctorCommand.self,
        ExecCommand.self, MigrateCommand.self, ListKeychainsCommand.self, ShowKeychainInfoCommand.self, ForgetUserCommand.self,
        SearchCommand.self, LookupCommand.self, StoreCommand.self, ClearCommand.self,
        GitCredentialCommand.self, DockerCredentialCommand.self, SSHAddCommand.self, SSHAskpassCommand.self,
    ]

    /// The options a macOS alias implies (add-internet-password means add --internet). A switch,
    /// not a dictionary: a dictionary type instantiated at run time costs a read a conformance
    /// scan (docs/DECISIONS.md, "A read pays for its own work only").
    static func impliedArguments(for verb: String) -> [String] {
        switch verb {
        case "add-internet-password", "find-internet-password", "delete-internet-password": return ["--internet"]
        default: return []
        }
    }

    static let versionOption = OptionSpec.flag("--version", help: "Print the version.")
    static let helpOption = OptionSpec.flag("-h", "--help", help: "Show help.")
    /// sudo's -v: `keygate -v` is `keygate validate`.
    static let validateOption = OptionSpec.flag("-v", help: "Validate, as sudo -v: the same as `keygate validate`.")

    /// The options before the verb and the usage line: what every run parses. The verbs are not
    /// listed here: building all 26 configurations (and their help texts) is work a `get` does
    /// not need; `topLevelHelp` lists them for help.
    static let topLevel = CommandConfiguration(
        commandName: "keygate",
        abstract: "The Apple Keychain's access-control model on Linux: sealed items in your Secret Service, unlocked through PAM.",
        discussion: """
            Exit status: 0 success, 44 not found, 45 duplicate, 51 authentication failed, 128 canceled, 36 interaction not \
            allowed, 53 not available, 206 bad parameter, 93 cannot decode, 2 usage error.
            """,
        usage: "[--askpass PROG | --pinentry] [--verbose] [--no-unlock-prompt] VERB [OPTIONS] | -v",
        options: [versionOption, helpOption, validateOption]
            + GlobalOptions.all + [GlobalOptions.noUnlockPrompt])

    /// `topLevel` with every verb under SUBCOMMANDS, for `keygate help` and `keygate --help`.
    static var topLevelHelp: CommandConfiguration {
        var help = topLevel
        help.subcommands = commands.map { $0.configuration }
        return help
    }

    /// Runs the CLI with `arguments` (without the program name) and returns the exit status.
    public static func run(_ arguments: [String], programName: String = "keygate") -> Int32 {
        run(arguments, raw: [], programName: programName)
    }

    /// `raw` is argv's bytes for `arguments` (see CommandContext.rawArguments), or empty.
    static func run(_ arguments: [String], raw: [[UInt8]], programName: String) -> Int32 {
        // ssh-keygen's askpass child while `keygate ssh-add` checks a passphrase (SSHKeygen): one
        // variable, read without the snapshot a command takes below.
        if ProcessEnvironment.variable(SSHKeygen.feedVariable) == "1" { return SSHKeygen.feed() }
        AuditLog.identifyAsKeygate()
        // A Secret Service prompt shown as a window (an unlock dialog) is announced on stderr.
        SecretServicePrompt.onWindowWait { Console.err($0 + "\n") }
        // Options before the verb, parsed once by the same parser as a verb's, against topLevel.
        var args: [String]
        let leading: ParsedArguments
        do {
            (leading, args) = try ArgumentParser.parseLeadingOptions(arguments, for: topLevel, programName: programName)
        } catch {
            Console.err("keygate: \(error.message) before the verb\n\(error.usage)\n")
            return 2
        }
        // --version and --help act at once; the first of them given wins.
        for (key, _) in leading.sequence {
            if key == versionOption.key {
                Console.out("keygate \(version)\n")
                return 0
            }
            if key == helpOption.key {
                Console.out(HelpFormatter.help(for: topLevelHelp, programName: programName) + "\n")
                return 0
            }
        }
        if leading.flag(GlobalOptions.verbose) { AuditLog.echoToStandardError = true }
        // Passed down in the command's context, never through this process's environment (which
        // `keygate exec`'s command and every prompter would inherit).
        let unlockPrompt: UnlockPromptSetting? = leading.flag(GlobalOptions.noUnlockPrompt) ? .never : nil
        let askpass = leading.value(GlobalOptions.askpass)
        let pinentry = leading.flag(GlobalOptions.pinentry)
        if leading.flag(validateOption) {
            // `keygate -v`, as `sudo -v`: the validate verb, which takes no other.
            guard args.isEmpty else {
                return usage("-v is `keygate validate` and takes no verb (got '\(args[0])')", topLevel, programName)
            }
            args = ["validate"]
        }
        guard let verb = args.first else {
            Console.err(HelpFormatter.help(for: topLevelHelp, programName: programName) + "\n")
            return 2
        }
        args.removeFirst()
        if verb == "help" {
            guard let name = args.first else {
                Console.out(HelpFormatter.help(for: topLevelHelp, programName: programName) + "\n")
                return 0
            }
            guard let command = lookup(name) else { return unknownVerb(name, programName) }
            Console.out(HelpFormatter.help(for: command.configuration, programName: programName) + "\n")
            return 0
        }
        guard let command = lookup(verb) else { return unknownVerb(verb, programName) }
        let config = command.configuration
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(impliedArguments(for: verb) + args, for: config)
        } catch {
            Console.err("keygate: \(error.message)\n\(error.usage)\n")
            return 2
        }
        if parsed.helpRequested {
            Console.out(HelpFormatter.help(for: config, programName: programName) + "\n")
            return 0
        }
        if parsed.flag(GlobalOptions.verbose) { AuditLog.echoToStandardError = true }
        // One command per process: the keychain context is read once, not fingerprinted for reuse.
        KeychainProcess.runsOneCommand()
        // The CLI's one read of its environment, once a command runs (--version and help take
        // none): passed down from here (KeygateEnvironment).
        let environment = KeygateEnvironment.process()
        let context = CommandContext(programName: programName, configuration: environment,
                                     askpass: parsed.value(GlobalOptions.askpass) ?? askpass,
                                     pinentry: pinentry || parsed.flag(GlobalOptions.pinentry), rawArguments: raw,
                                     unlockPrompt: unlockPrompt)
        do {
            return try command.run(parsed, context: context)
        } catch let error as KeychainError {
            if !error.message.isEmpty { Console.err("keygate: \(error.message)\n") }
            TypeAhead.discard(after: error)
            return error.exitCode
        } catch let error as UsageError {
            Console.err("keygate: \(error.message)\n\(error.usage)\n")
            return 2
        } catch {
            Console.err("keygate: unexpected error: \(error)\n")
            return 1
        }
    }

    static func lookup(_ verb: String) -> (any KeygateCommand.Type)? {
        commands.first { $0.configuration.commandName == verb || $0.configuration.aliases.contains(verb) }
    }

    /// Exit 2, with the closest verb when there is one ("did you mean 'get'?"), as for options.
    private static func unknownVerb(_ verb: String, _ program: String) -> Int32 {
        let names = commands.flatMap { [$0.configuration.commandName] + $0.configuration.aliases } + ["help"]
        let hint = NameSuggestion.closest(to: verb, among: names).map { ": did you mean '\($0)'?" } ?? ""
        return usage("unknown verb '\(verb)'\(hint) (all verbs: `keygate help`)", topLevel, program)
    }

    private static func usage(_ message: String, _ config: CommandConfiguration, _ program: String) -> Int32 {
        Console.err("keygate: \(message)\n\(HelpFormatter.usageLine(for: config, programName: program))\n")
        return 2
    }
}
