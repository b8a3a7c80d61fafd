// `keygate exec`: reads one or more secrets (one authentication at most, through a
// shared AuthenticationContext), then runs a command with them, the sudo-style flow
// for deploy scripts. Each -s/-a pair goes where the option after it says: --env NAME
// (the child's environment), --stdin (a pipe on the child's stdin) or --fd N (a pipe
// on descriptor N). The command is spawned directly (posix_spawnp, no shell); keygate
// waits and exits with the child's status, 128+signal when a signal ended it.
// Delegates the reads to KeychainOperations and the spawning to ChildProcess below.
import Keygate

enum ExecCommand: KeygateCommand {
    static let service = OptionSpec.repeated("-s", "--service", valueName: "SERVICE", help: "The service of the next secret.")
    static let account = OptionSpec.repeated("-a", "--account", valueName: "ACCOUNT", help: "The account of the next secret.")
    static let env = OptionSpec.repeated("--env", valueName: "NAME", help: "Put the secret in the command's environment as NAME.")
    static let stdin = OptionSpec.flag("--stdin", help: "Give the secret on the command's standard input (a pipe).")
    static let fd = OptionSpec.repeated("--fd", valueName: "N", help: "Give the secret on a pipe at descriptor N (3-99) in the command.")

    static let configuration = CommandConfiguration(
        commandName: "exec",
        abstract: "Run a command with secrets in its environment, on its stdin or on a pipe descriptor.",
        discussion: """
            Each -s SERVICE -a ACCOUNT is followed by where its secret goes: --env NAME, --stdin or --fd N (N from 3 to 99). \
            Repeat the group for more secrets. Everything after -- is the command, run without a shell. All secrets are read \
            first (one password prompt at most); a missing item exits 44 and the command does not run. The exit status is the \
            command's (128+N when signal N ended it, 127 when it cannot be started). The pipe forms never put the secret in the \
            child's environment.

            Example: keygate exec -s deploy -a token --env API_TOKEN -- ./deploy.sh
            """,
        usage: "-s SERVICE -a ACCOUNT (--env NAME | --stdin | --fd N) [...] -- COMMAND [ARGS...]",
        options: [
            service,
            account,
            env,
            stdin,
            fd,
        ] + GlobalOptions.all)

    /// Where one secret goes in the child.
    enum Destination: Equatable {
        case environment(String)
        case standardInput
        case descriptor(Int32)
    }

    struct Request {
        let service: String
        let account: String
        let destination: Destination
    }

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let requests = try plan(args, context: context)
        let command = args.afterDoubleDash
        guard let program = command.first, !program.isEmpty else {
            throw context.usageError("exec needs a command after --", configuration)
        }
        let auth = AuthenticationContext()
        auth.localizedReason = "run \(program) with " + requests.map { "\($0.service)/\($0.account)" }.joined(separator: ", ")
        let operations = try KeychainOperations(prompter: context.prompter, reason: auth.localizedReason, context: auth,
                                                unlockPrompt: context.unlockPrompt, environment: context.configuration)
        var secrets: [(Request, SecureBytes)] = []
        for request in requests {
            let identity = ItemIdentity.generic(service: request.service, account: request.account)
            guard let secret = try operations.secret(for: identity) else {
                throw KeychainError(.itemNotFound, """
                    no item for \(identity.displayName): \(program) was not run; list what exists with `keygate list`
                    """)
            }
            secrets.append((request, secret))
        }
        auth.invalidate()
        // The parser's afterDoubleDash is always argv's tail; its raw bytes are what the command gets
        // (Swift's String would have turned invalid UTF-8 into U+FFFD).
        let raw = context.rawArguments.count >= command.count ? Array(context.rawArguments.suffix(command.count))
            : command.map { Array($0.utf8) }
        return try ChildProcess.run(raw, secrets: &secrets, environment: context.environment)
    }

    /// The -s/-a groups in command-line order, each closed by its destination.
    static func plan(_ args: ParsedArguments, context: CommandContext) throws -> [Request] {
        var service: String?
        var account: String?
        var requests: [Request] = []
        for (key, value) in args.sequence {
            let destination: Destination
            switch key {
            case Self.service.key: try ItemOptions.checkName(value, "service"); service = value; continue
            case Self.account.key: try ItemOptions.checkName(value, "account"); account = value; continue
            case Self.env.key:
                guard isIdentifier(value) else {
                    throw context.usageError("""
                        --env '\(value)' is not a valid variable name: use letters, digits and _, not starting with a digit
                        """, configuration)
                }
                destination = .environment(value)
            case Self.stdin.key: destination = .standardInput
            case Self.fd.key:
                guard let n = Int32(value), n >= 3, n <= 99 else {
                    throw context.usageError("""
                        --fd '\(value)' is not a descriptor from 3 to 99 (0-2 are stdin/stdout/stderr: use --stdin)
                        """, configuration)
                }
                destination = .descriptor(n)
            default: continue
            }
            guard let s = service, let a = account else {
                throw context.usageError("give -s SERVICE and -a ACCOUNT before each --env, --stdin or --fd", configuration)
            }
            if requests.contains(where: { $0.destination == destination }) {
                throw context.usageError("two secrets go to the same place (\(describe(destination))): give each its own", configuration)
            }
            requests.append(Request(service: s, account: a, destination: destination))
            service = nil
            account = nil
        }
        if service != nil || account != nil {
            throw context.usageError("-s/-a at the end has no destination: add --env NAME, --stdin or --fd N after it", configuration)
        }
        guard !requests.isEmpty else {
            throw context.usageError("exec needs at least one -s SERVICE -a ACCOUNT with --env NAME, --stdin or --fd N", configuration)
        }
        return requests
    }

    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first) else { return false }
        return name.utf8.allSatisfy { $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
    }

    static func describe(_ destination: Destination) -> String {
        switch destination {
        case .environment(let name): return "--env \(name)"
        case .standardInput: return "--stdin"
        case .descriptor(let n): return "--fd \(n)"
        }
    }
}
