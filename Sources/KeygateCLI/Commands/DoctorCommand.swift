// `keygate doctor`: checks the setup Keygate depends on and prints each check as
// OK, WARN or FAIL with a next step. Exit 0 when nothing FAILs, else 53
// (errSecNotAvailable): a FAIL is something that stops Keygate working. Never
// prompts, never reads a secret. The checks are the library's Doctor.

import Keygate

enum DoctorCommand: KeygateCommand {
    static let json = OptionSpec.flag("--json", help: "Print a JSON array of {check, status, detail, advice}.")

    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the setup (session bus, Secret Service, PAM, policies, host key, keyring) and say how to fix it.",
        discussion: """
            Each check prints OK, WARN or FAIL, with a next step for each problem: the session bus; which item store is in use \
            (Secret Service or embedded) and why; the Secret Service, who provides it and its version, its default collection's \
            lock state and, when unlocked, a throwaway item created, read back and deleted through it; the PAM service files \
            /etc/pam.d/keygate and keygate-passcode; the policy files; whether pam_keygate.so is in the login stacks; the host \
            key /var/lib/keygate/host.key; the setuid-root helper keygate-gatekeeper (installed, root's, setuid, writable by \
            root alone); the kernel keyring quota; where audit lines go (syslog or the journal, or lost with nothing on \
            /dev/log); fprintd, pam_fprintd in /etc/pam.d/keygate-biometry and your enrolled fingers; the free space and writability of the data folder's disk; the keychain's state and the timeouts in force.\n\nExit status: 0 when \
            nothing FAILs (WARNs included), 53 when a check FAILs. Never prompts and never reads a secret.
            """,
        options: [json] + GlobalOptions.all)

    static func run(_ args: ParsedArguments, context: CommandContext) throws -> Int32 {
        var results = Doctor.systemChecks(environment: context.configuration)
        do {
            // Never prompts: not even the Secret Service's unlock window.
            let operations = try context.lookingOnly().operations()
            let status = KeychainStatus(of: operations)
            results = Doctor.adjust(results, for: status) + Doctor.keychainChecks(status)
            if let damaged = Doctor.damagedItems(operations, status) { results.append(damaged) }
        } catch let error as KeychainError {
            results.append(Doctor.keychainUnavailable(error))
        }
        Console.out(args.flag(Self.json) ? json(results) + "\n" : text(results))
        return results.contains { $0.level == .fail } ? KeychainError(.notAvailable, "").exitCode : 0
    }

    static func text(_ results: [DiagnosticResult]) -> String {
        var out = ""
        for r in results {
            out += "\(r.level.rawValue.padding(4)) \(r.check): \(r.detail)\n"
            if !r.advice.isEmpty { out += "     -> \(r.advice)\n" }
        }
        let fails = results.filter { $0.level == .fail }.count, warns = results.filter { $0.level == .warn }.count
        out += fails == 0 && warns == 0 ? "all checks passed\n" : "\(fails) FAIL, \(warns) WARN\n"
        return out
    }

    static func json(_ results: [DiagnosticResult]) -> String {
        "[" + results.map {
            JSON.object([("check", JSON.string($0.check)), ("status", JSON.string($0.level.rawValue)),
                         ("detail", JSON.string($0.detail)), ("advice", JSON.string($0.advice))])
        }.joined(separator: ",") + "]"
    }
}

private extension String {
    func padding(_ width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}
