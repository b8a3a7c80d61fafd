// `keygate add` (and macOS's add-generic-password / add-internet-password):
// seals a secret read from stdin, or typed twice at a no-echo prompt, and stores
// it. A secret on the command line is refused: argv is visible to every user.

import Keygate

enum AddCommand: KeygateCommand {
    static let update = OptionSpec.flag("-U", "--update", help: """
        Replace the secret of an existing item instead of failing; its label and comment stay unless -l or -j is given.
        """)
    static let accessible = OptionSpec.value("--accessible", valueName: "CLASS", help: """
        when-unlocked (default), after-first-unlock, when-passcode-set-this-device-only, when-unlocked-this-device-only or \
        after-first-unlock-this-device-only.
        """)
    static let access = OptionSpec.value("--access", valueName: "LIST", help: """
        Require an authentication to read: user-presence, device-passcode, biometry-any, current-set (comma-separated; with \
        --or or --and), or none. Without it, a new item gets the policy's default-access (shipped: user-presence) and a \
        replaced one (-U) keeps its own; what the item got is printed on standard error.
        """)
    static let or = OptionSpec.flag("--or", help: "Any one of the --access constraints is enough.")
    static let and = OptionSpec.flag("--and", help: "Every --access constraint is needed.")
    static let attr = OptionSpec.repeated("--attr", valueName: "NAME=VALUE", help: """
        Also store this attribute of your own (repeatable), as secret-tool and libsecret store any attribute: `search` \
        shows it and `search`, `lookup` and `clear` match it. Not a secret: attributes are stored in the clear.
        """)
    static let promptForSecret = OptionSpec.optionalValue("-w", valueName: "SECRET", help: """
        Last, ask for the secret at a prompt (macOS spelling). With a value, store that value, as macOS does, with a warning: \
        every user of this host can read a command line, and shells keep it in their history.
        """)

    static let configuration = CommandConfiguration(
        commandName: "add",
        abstract: "Add an item; the secret comes from standard input or a prompt.",
        discussion: """
            The secret is read from standard input when it is not a terminal (exact bytes, binary-safe), or asked for twice \
            without echo; it is at most 64 KiB (65536 bytes). Giving the secret as an argument is refused, because every \
            user can read a process's arguments; only macOS's -w SECRET is taken, with a warning.
            """,
        aliases: ["add-generic-password", "add-internet-password"],
        usage: "-s SERVICE -a ACCOUNT [-l LABEL] [-j COMMENT] [--attr NAME=VALUE]… [-U] [--accessible CLASS] [--access LIST [--or|--and] | --access none] < secret",
        options: ItemOptions.matching + [
            ItemOptions.label, ItemOptions.comment,
            attr,
            update,
            accessible,
            access,
            or,
            and,
            promptForSecret,
        ] + GlobalOptions.all,
        positionals: [PositionalSpec(name: "nothing", help: "Secrets are never taken from arguments.", optional: true, variadic: true)])

    static let maxSecretBytes = 64 * 1024

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        if !args.positionals.isEmpty {
            throw context.usageError("unexpected argument: secrets are never taken from arguments (but `-w SECRET`, as on macOS); "
                                     + "pipe the secret on standard input", configuration)
        }
        let identity = try ItemOptions.identity(args, configuration, context)
        var accessibility = Accessibility.whenUnlocked
        if let raw = args.value(Self.accessible) {
            guard let a = Accessibility(name: raw) else {
                throw KeychainError(.param, """
                    unknown accessibility class '\(raw)': use one of \(Accessibility.allCases.map(\.rawValue).joined(separator: ", "))
                    """)
            }
            accessibility = a
        }
        if args.value(Self.access) == nil, args.flag(Self.or) || args.flag(Self.and) {
            throw context.usageError("--or and --and combine the constraints given with --access", configuration)
        }
        let given = try AccessChoice.parse(args.value(Self.access), or: args.flag(Self.or), and: args.flag(Self.and))
        var attributes = ItemAttributes(identity: identity, label: args.value(ItemOptions.label),
                                        comment: args.value(ItemOptions.comment), accessibility: accessibility)
        for (value, what) in [(attributes.label, "label"), (attributes.comment, "comment")] {
            if let value { try ItemOptions.checkName(value, what) }
        }
        attributes.extras = try extraAttributes(args, context: context)
        let operations = try context.operations(reason: "store \(identity.displayName)")
        let replace = args.flag(Self.update)
        let (access, source) = try AccessChoice.resolve(given, identity: identity, replace: replace, operations: operations)
        attributes.accessControl = access
        let secret: SecureBytes
        if let given = args.value(Self.promptForSecret), !given.isEmpty {
            // macOS accepts it; the value is never echoed, logged or audited.
            Console.err("""
                keygate: warning: the secret was given on the command line: other users of this host can read it in \
                /proc/PID/cmdline while keygate runs, and your shell may keep it in its history; pipe it on standard input \
                (printf %s "$SECRET" | keygate add …) or put -w last to be prompted

                """)
            var bytes = Array(given.utf8)
            secret = try SecureBytes(consuming: &bytes)
            guard secret.count <= maxSecretBytes else {
                throw KeychainError(.param, "the secret given with -w is \(secret.count) bytes, more than the \(maxSecretBytes)-byte limit")
            }
        } else {
            secret = try readSecret(for: identity, context: context)
        }
        let result = try operations.add(attributes, secret: secret, replace: replace, keepingUnsetText: true)
        Console.err(AccessChoice.statement(identity, source, result))
        return 0
    }

    /// Standard input when it is not a terminal; else a no-echo prompt, twice.
    static func readSecret(for identity: ItemIdentity, context: CommandContext) throws -> SecureBytes {
        if !Console.isTerminal(0) {
            let secret = try SecureBytes.read(fileDescriptor: 0, maxBytes: maxSecretBytes)
            if secret.count == 0 {
                throw KeychainError(.param, """
                    no secret on standard input: pipe it in (printf %s \"$SECRET\" | keygate add …), or run from a terminal to be \
                    prompted
                    """)
            }
            return secret
        }
        let prompter = context.prompter
        try prompter.ensureAvailable()
        for _ in 0..<3 {
            guard let first = try prompter.readSecret(prompt: "Secret for \(identity.displayName): ") else {
                throw KeychainError(.userCanceled, "canceled: nothing was stored")
            }
            guard let second = try prompter.readSecret(prompt: "Retype the secret: ") else {
                throw KeychainError(.userCanceled, "canceled: nothing was stored")
            }
            if first.count > 0, first.constantTimeEquals(second) { return first }
            prompter.notify(first.count == 0 ? "The secret is empty; try again." : "The two entries differ; try again.")
        }
        throw KeychainError(.param, "the secret was not entered the same way twice: nothing was stored")
    }

    /// `--attr NAME=VALUE`, each a name Keygate does not keep itself (ItemAttributes.isExtraName).
    static func extraAttributes(_ args: ParsedArguments, context: CommandContext) throws -> [String: String] {
        var extras: [String: String] = [:]
        for given in args.values(Self.attr) {
            guard let eq = given.firstIndex(of: "="), eq != given.startIndex else {
                throw context.usageError("--attr takes NAME=VALUE, with an '='", configuration)
            }
            let name = String(given[..<eq]), value = String(given[given.index(after: eq)...])
            if ItemAttributes.providerAttributeNames.contains(name) {
                throw context.usageError("--attr \(name): a name KeePassXC keeps for its own entries: choose another name", configuration)
            }
            guard ItemAttributes.isExtraName(name) else {
                throw context.usageError("""
                    --attr \(name): a name Keygate keeps itself; give the service, account, label and comment with -s, -a, -l \
                    and -j, and choose another name for your own attribute
                    """, configuration)
            }
            try ItemOptions.checkName(name, "attribute name")
            try ItemOptions.checkName(value, name)
            if let earlier = extras[name], earlier != value {
                throw context.usageError("--attr \(name) is given twice with different values", configuration)
            }
            extras[name] = value
        }
        return extras
    }
}
