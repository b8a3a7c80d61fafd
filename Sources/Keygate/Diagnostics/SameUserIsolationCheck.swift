// Doctor check: two kernel settings that decide how far a process of the same user can
// reach into the terminal where a password is typed, which no gate in Keygate can stop
// (docs/SECURITY.md). kernel.yama.ptrace_scope 0, or no Yama at all, lets any process of
// the user attach to the user's shell and read what is typed; dev.tty.legacy_tiocsti 1
// (or a kernel older than 6.2, which has no switch) lets one push keystrokes into
// another's terminal. Reads /proc/sys through FileProbe; changes nothing.

enum SameUserIsolationCheck {
    static let name = "same-user-isolation"
    static let ptraceScopePath = "/proc/sys/kernel/yama/ptrace_scope"
    static let legacyTIOCSTIPath = "/proc/sys/dev/tty/legacy_tiocsti"

    static func run() -> DiagnosticResult {
        evaluate(ptraceScope: FileProbe.readText(ptraceScopePath), legacyTIOCSTI: FileProbe.readText(legacyTIOCSTIPath))
    }

    /// The result for the two files' contents (nil: the file does not exist or cannot be read).
    static func evaluate(ptraceScope: String?, legacyTIOCSTI: String?) -> DiagnosticResult {
        var problems: [String] = []
        var advice: [String] = []
        switch ptraceScope.map({ $0.trimmingWhitespace }) {
        case nil:
            problems.append("the kernel has no Yama, so any process of yours can ptrace your shell and read what you type")
            advice.append("boot a kernel with Yama (CONFIG_SECURITY_YAMA) and set kernel.yama.ptrace_scope=1")
        case "0":
            problems.append("kernel.yama.ptrace_scope is 0, so any process of yours can ptrace your shell and read what you type")
            advice.append("sysctl -w kernel.yama.ptrace_scope=1 (keep it in /etc/sysctl.d/10-ptrace.conf)")
        default:
            break
        }
        switch legacyTIOCSTI.map({ $0.trimmingWhitespace }) {
        case nil:
            problems.append("the kernel has no dev.tty.legacy_tiocsti switch (older than 6.2), so a process can type into your terminal (TIOCSTI)")
            advice.append("use a kernel of 6.2 or later with dev.tty.legacy_tiocsti=0")
        case "1":
            problems.append("dev.tty.legacy_tiocsti is 1, so a process can type into your terminal (TIOCSTI)")
            advice.append("sysctl -w dev.tty.legacy_tiocsti=0 (keep it in /etc/sysctl.d/10-tiocsti.conf)")
        default:
            break
        }
        guard !problems.isEmpty else {
            return DiagnosticResult(name, .ok, "ptrace is limited to descendants or less, and TIOCSTI is off")
        }
        return DiagnosticResult(name, .warn, problems.joined(separator: "; "),
                                advice: advice.joined(separator: "; ") + " (as root)")
    }
}

private extension String {
    var trimmingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last == "\n" || last == " " || last == "\t" { text = text.dropLast() }
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        return String(text)
    }
}
