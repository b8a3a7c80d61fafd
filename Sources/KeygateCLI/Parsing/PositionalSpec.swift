// One positional argument a command accepts. ArgumentParser counts positionals
// against these; HelpFormatter renders them under POSITIONAL ARGUMENTS.

/// A positional argument such as `<keychain>`.
struct PositionalSpec: Sendable {
    var name: String
    var help: String
    /// May be left out. Optional positionals come after the required ones.
    var optional: Bool
    /// Takes every remaining positional. Only the last positional may be variadic.
    /// A variadic that is not optional needs at least one value.
    var variadic: Bool

    init(name: String, help: String, optional: Bool = false, variadic: Bool = false) {
        self.name = name
        self.help = help
        self.optional = optional
        self.variadic = variadic
    }
}
