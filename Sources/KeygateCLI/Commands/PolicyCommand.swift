// `keygate policy check|explain|list`: validate policy files like `visudo -c`, show
// the effective decision for an item and where each setting came from, and list the
// files read with their state. Loading, parsing and merging are Keygate's PolicySet;
// this verb only prints. Invalid policy exits 206 (errSecParam, as for other bad input);
// explain under a broken system file exits 53 (errSecNotAvailable: fail closed).

import Keygate

enum PolicyCommand: KeygateCommand {
    static let check = CommandConfiguration(
        commandName: "check",
        abstract: "Validate policy files (all installed ones, or FILE…): exit 0 and \"OK\", or each error as file:line:column and exit 206.")
    static let explain = CommandConfiguration(
        commandName: "explain",
        abstract: "Print the effective policy for -s SERVICE [-a ACCOUNT] and the file:line [section] each setting came from.")
    static let list = CommandConfiguration(
        commandName: "list",
        abstract: "List the policy files in reading order (vendor, admin, user) with their state.")

    static let service = OptionSpec.value("-s", "--service", valueName: "service", help: "explain: the item's service.")
    static let account = OptionSpec.value("-a", "--account", valueName: "account", help: "explain: the item's account (default: empty).")
    static let attribute = OptionSpec.value("--secret-service", valueName: "name=value", help: """
        explain: the attributes of an item a Secret Service client makes (repeat for each, e.g. \
        --secret-service xdg:schema=org.gnome.keyring.NetworkPassword): the access its [secret-service] sections give it.
        """)

    static let configuration = CommandConfiguration(
        commandName: "policy",
        abstract: "Check, explain and list policy files (see keygate.policy(5)).",
        discussion: """
            Exit status: 0 success; 206 invalid policy (check) or bad parameter; 53 when a system policy file is unusable \
            (explain fails closed); 2 usage error.
            """,
        usage: "check [FILE…] | explain -s SERVICE [-a ACCOUNT] | explain --secret-service NAME=VALUE… | list",
        options: [
            service,
            account,
            attribute,
        ],
        positionals: [
            PositionalSpec(name: "action", help: "check, explain or list."),
            PositionalSpec(name: "file", help: "check: files to validate (syntax only).", optional: true, variadic: true),
        ],
        subcommands: [check, explain, list])

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let action = args.positional("action") ?? ""
        let files = args.positionalValues("file")
        if action != "check", !files.isEmpty {
            throw context.usageError("policy \(action) takes no file arguments", configuration)
        }
        if action != "explain", args.value(Self.service) != nil || args.value(Self.account) != nil || args.value(Self.attribute) != nil {
            throw context.usageError("-s, -a and --secret-service go with `policy explain`", configuration)
        }
        switch action {
        case "check": return runCheck(files, context)
        case "explain" where args.value(Self.attribute) != nil:
            guard args.value(Self.service) == nil, args.value(Self.account) == nil else {
                throw context.usageError("policy explain takes -s/-a (Keygate's items) or --secret-service (a client's), not both",
                                         configuration)
            }
            var attributes: [String: String] = [:]
            for pair in args.values(Self.attribute) {
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    throw context.usageError("--secret-service takes NAME=VALUE, e.g. xdg:schema=org.freedesktop.Secret.Generic",
                                             configuration)
                }
                attributes[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
            }
            return try runExplainSecretService(attributes, context)
        case "explain":
            guard let service = args.value(Self.service) else {
                throw context.usageError("policy explain needs -s SERVICE", configuration)
            }
            return try runExplain(service: service, account: args.value(Self.account) ?? "", context)
        case "list": return runList(context)
        default:
            throw context.usageError("unknown policy action: use check, explain or list", configuration)
        }
    }

    static func runCheck(_ paths: [String], _ context: CommandContext) -> Int32 {
        let problems: [String]
        let count: Int
        if paths.isEmpty {
            let set = PolicySet.loadForCurrentUser(environment: context.configuration)
            problems = set.problems
            count = set.files.filter { $0.state != "absent" }.count
        } else {
            problems = PolicySet.check(paths: paths)
            count = paths.count
        }
        guard problems.isEmpty else {
            Console.err(problems.map { $0 + "\n" }.joined())
            Console.err("keygate: \(problems.count) error\(problems.count == 1 ? "" : "s") in the policy files: fix them; "
                        + "a broken system policy file makes Keygate refuse to add, change or read items\n")
            return 206
        }
        Console.out("OK: \(count) file\(count == 1 ? "" : "s")\n")
        return 0
    }

    static func runExplain(service: String, account: String, _ context: CommandContext) throws -> Int32 {
        let set = PolicySet.loadForCurrentUser(environment: context.configuration)
        let decision = try set.decision(service: service, account: account)
        var out = "policy for service \(quoted(service)), account \(quoted(account)) (\(set.readCount) file\(set.readCount == 1 ? "" : "s") read):\n"
        for key in PolicyKey.allCases {
            let origin = decision.origins[key].map { "\($0.description) (\($0.layer.rawValue))" } ?? "default"
            out += "  " + pad(key.rawValue, 23) + pad(decision.valueText(key), 32) + origin + "\n"
        }
        Console.out(out)
        for warning in decision.warnings { Console.err("warning: \(warning)\n") }
        return 0
    }

    /// The access an item a Secret Service client makes gets, and the [secret-service] sections it came from.
    static func runExplainSecretService(_ attributes: [String: String], _ context: CommandContext) throws -> Int32 {
        let set = PolicySet.loadForCurrentUser(environment: context.configuration)
        let (access, decision) = try set.secretServiceDecision(attributes: attributes)
        let shown = attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: ", ")
        var out = "policy for a Secret Service client's item with \(shown) (\(set.readCount) file\(set.readCount == 1 ? "" : "s") read):\n"
        out += "  " + pad("access", 23) + pad(ItemAccess.text(access), 32) + "the access its item is sealed with\n"
        for key in [PolicyKey.defaultAccess, .minimumAccess] {
            let origin = decision.origins[key].map { "\($0.description) (\($0.layer.rawValue))" } ?? "default (none, as every provider)"
            out += "  " + pad(key.rawValue, 23) + pad(decision.valueText(key), 32) + origin + "\n"
        }
        Console.out(out)
        for warning in decision.warnings { Console.err("warning: \(warning)\n") }
        return 0
    }

    static func runList(_ context: CommandContext) -> Int32 {
        let set = PolicySet.loadForCurrentUser(environment: context.configuration)
        var out = ""
        for file in set.files {
            out += pad(file.layer.rawValue, 8) + file.path + ": " + file.state + "\n"
        }
        Console.out(out)
        return 0
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text + " " : text + String(repeating: " ", count: width - text.count)
    }

    private static func quoted(_ text: String) -> String { "\"" + text + "\"" }
}
