// The module's arguments from the PAM stack line (`session optional pam_keygate.so
// debug lock_after=600`), parsed into one value. Anything not understood is kept as
// a problem to log, and otherwise ignored: a typo must never break a login.

struct ModuleOptions: Equatable, Sendable {
    /// Log what the module does at LOG_DEBUG.
    var debug = false
    /// Unlock at session open, but never lock at session close.
    var unlockOnly = false
    /// Seconds the master key stays unlocked; nil = the policy's lock-after.
    var lockAfter: UInt32?
    /// Users below this uid (system accounts) are left alone.
    var minUID: UInt32 = 1000
    /// One line per argument that was not understood, ready to log (no secrets: these
    /// come from the administrator's PAM file).
    var problems: [String] = []

    static let maxArgumentBytes = 256
    /// `helper=PATH` is the thin module's own option (which keygate-pam-helper to start);
    /// the module passes it on, and the helper leaves it out of its options.
    static let helperPrefix = "helper="

    init() {}

    init(arguments: [String]) {
        for argument in arguments { parse(argument) }
    }

    private mutating func parse(_ argument: String) {
        guard argument.utf8.count <= Self.maxArgumentBytes else {
            problems.append("an option of \(argument.utf8.count) bytes is too long to be one of ours: ignored")
            return
        }
        let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = parts.first.map(String.init) ?? ""
        let value = parts.count == 2 ? String(parts[1]) : nil
        switch (name, value) {
        case ("debug", nil):
            debug = true
        case ("unlock_only", nil):
            unlockOnly = true
        case ("lock_after", let value?):
            if let seconds = UInt32(value) {
                lockAfter = seconds
            } else {
                problems.append("lock_after=\(value) is not a number of seconds (0 to \(UInt32.max)): ignored, the policy's lock-after applies")
            }
        case ("min_uid", let value?):
            if let uid = UInt32(value) {
                minUID = uid
            } else {
                problems.append("min_uid=\(value) is not a uid: ignored, min_uid stays \(minUID)")
            }
        default:
            problems.append("unknown option '\(argument)': ignored (known: debug, unlock_only, lock_after=N, min_uid=N, helper=PATH)")
        }
    }

    /// Reads PAM's argc/argv. Arguments that are not UTF-8 are reported, not parsed.
    static func from(argc: Int32, argv: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> ModuleOptions {
        var arguments: [String] = []
        var undecodable = 0
        if let argv, argc > 0 {
            for index in 0..<Int(argc) {
                guard let pointer = argv[index] else { continue }
                if let text = String(validatingCString: pointer) {
                    arguments.append(text)
                } else {
                    undecodable += 1
                }
            }
        }
        var options = ModuleOptions(arguments: arguments)
        if undecodable > 0 {
            options.problems.append("\(undecodable) option(s) are not valid UTF-8: ignored")
        }
        return options
    }
}
