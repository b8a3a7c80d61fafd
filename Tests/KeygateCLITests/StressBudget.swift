// How hard the crash, race and dying-dependency tests push: small numbers for every
// `make check`, big ones for `make stress`, which runs the same tests with the
// environment below raised. Each test reports its figures on one "STRESS" line, so
// the stress log gives kills survived, operations raced and items lost.
import Foundation

enum StressBudget {
    /// SIGKILLs per kill loop (STRESS_KILLS, default 20; `make stress` uses 200).
    static var kills: Int { value("STRESS_KILLS", default: 20) }
    /// SIGKILLs in the PAM re-wrap loop, whose every check runs two processes as the
    /// user: STRESS_KILLS when set, else 10, to keep `make check` short.
    static var pamKills: Int { value("STRESS_KILLS", default: 10) }
    /// Writer processes in the CLI race (STRESS_PROCS, default 2; `make stress` uses 8).
    static var processes: Int { value("STRESS_PROCS", default: 2) }
    /// Operations per writer, process or task (STRESS_OPS, default 50; `make stress` uses 500).
    static var operations: Int { value("STRESS_OPS", default: 50) }
    /// Tasks in the in-process race (STRESS_TASKS, default 16).
    static var tasks: Int { value("STRESS_TASKS", default: 16) }

    private static func value(_ name: String, default fallback: Int) -> Int {
        guard let text = ProcessInfo.processInfo.environment[name], let n = Int(text), n > 0 else { return fallback }
        return n
    }

    /// One line for the stress log: `STRESS test: k=v ...`.
    static func report(_ test: String, _ figures: KeyValuePairs<String, Int>) {
        let text = figures.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        print("STRESS \(test): \(text)")
    }
}

/// The environment for system tools run as root (runuser, keyctl, unshare).
let rootToolEnvironment = ["PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]
