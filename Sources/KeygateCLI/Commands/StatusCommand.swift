// `keygate status`: whether the keychain exists and is unlocked, for how long,
// which keys are cached (names and seconds left, never bytes) and the store's state.

import Keygate

enum StatusCommand: KeygateCommand {
    static let json = OptionSpec.flag("--json", help: "Print a JSON object.")

    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the keychain is unlocked, for how long, and the store's state.",
        options: [json] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        let s = KeychainStatus(of: try context.operations())
        if args.flag(Self.json) {
            Console.out(try json(s) + "\n")
            return 0
        }
        var out = "user: \(s.user)\n"
        out += "keychain: \(s.initialized ? "initialised" : "not initialised (run keygate init)") in \(s.dataDirectory)\n"
        if s.unlocked {
            out += "state: unlocked" + (s.secondsUntilLock.map { ", locks in \($0) s" } ?? "") + "\n"
        } else {
            out += "state: locked" + (s.afterFirstUnlockAvailable ? " (after-first-unlock items readable)" : "") + "\n"
        }
        out += "lock-after: \(s.lockAfter) s\n"
        out += "reuse: \(s.reuseDuration) s in scope \(s.reuseScope)\n"
        if let left = s.lockoutSecondsLeft, left > 0 {
            out += "lockout: active, \(left) s left: no password or finger is tried for any gated item until then\n"
        } else if let failed = s.failedAttempts, failed > 0 {
            out += "lockout: none; \(failed) failed attempt\(failed == 1 ? "" : "s") since the last success\n"
        }
        out += FingerprintState.current(userName: s.user, environment: context.configuration).summary + "\n"
        if let kdf = s.passwordKDF { out += "password protector: \(kdf)\n" }
        if s.loginStale {
            out += "problem: \(KeychainStatus.staleLoginProblem); \(KeychainStatus.staleLoginAdvice)\n"
        }
        for key in s.cachedKeys {
            out += "cached: \(key.name) (\(key.secondsLeft.map { "\($0) s left" } ?? "until reboot or lock --all"))\n"
        }
        if let e = s.storeError {
            out += "store: unavailable: \(e)\n"
        } else if s.storeKind == StoreKind.embedded.rawValue {
            out += "store: \(s.store ?? "?"), \(s.collection ?? "?")\n"
        } else {
            out += """
                store: \(s.store ?? "?"), collection \(ItemFormatter.quoted(s.collection ?? "?")), \
                \(s.collectionLocked == true ? "locked" : "unlocked")\n
                """
        }
        if let kind = s.storeKind { out += "store-choice: \(kind): \(s.storeReason ?? "")\n" }
        if let advice = s.storeMismatchAdvice { out += "store-advice: \(advice)\n" }
        Console.out(out)
        return 0
    }

    /// The status as one JSON object (KeychainStatus's own encoding: every field, nil as null).
    static func json(_ s: KeychainStatus) throws -> String {
        try JSONOutputEncoder.encode(s)
    }
}
