// One line of `keygate doctor`: what was checked, how it stands (OK, WARN, FAIL),
// what was found and the next step. A FAIL is something that stops Keygate from
// working (the CLI exits 53, errSecNotAvailable); a WARN degrades it. Pure data.

public struct DiagnosticResult: Sendable, Equatable {
    public enum Level: String, Sendable, Equatable {
        case ok = "OK"
        case warn = "WARN"
        case fail = "FAIL"
    }

    /// A short stable name, e.g. "session-bus", "secret-service", "host-key".
    public var check: String
    public var level: Level
    /// What was found.
    public var detail: String
    /// The next step; empty when there is nothing to do.
    public var advice: String

    public init(_ check: String, _ level: Level, _ detail: String, advice: String = "") {
        self.check = check
        self.level = level
        self.detail = detail
        self.advice = advice
    }
}
