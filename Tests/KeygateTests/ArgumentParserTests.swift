// Tests for ArgumentParser: every parsing rule, the exact error messages, and
// that errors never quote what might be a secret.
import XCTest
@testable import KeygateCLI

final class ArgumentParserTests: XCTestCase {
    static let service = OptionSpec.value("-s", "--service", valueName: "service", help: "Service.")
    static let account = OptionSpec.value("-a", "--account", valueName: "account", help: "Account.")
    static let password = OptionSpec.value("-w", "--password", valueName: "password", help: "Password.")
    static let update = OptionSpec.flag("-U", "--update", help: "Update if present.")
    static let trustedApp = OptionSpec.repeated("-T", "--trusted-app", valueName: "path", help: "Trusted program.")
    static let force = OptionSpec.flag("-f", "--force", help: "Force.")
    static let host = OptionSpec.value("-h", "--host", valueName: "host", help: "Host.")

    /// `add-generic-password`-like: value options, a flag, a repeated option, one optional positional.
    static let add = CommandConfiguration(
        commandName: "add",
        abstract: "Add a generic password.",
        options: [service, account, password, update, trustedApp],
        positionals: [PositionalSpec(name: "keychain", help: "Keychain.", optional: true)]
    )

    /// `find-generic-password`-like: here -w is a flag ("print only the password").
    static let find = CommandConfiguration(
        commandName: "find",
        abstract: "Find a generic password.",
        options: [
            .value("-s", "--service", valueName: "service", help: "Service."),
            .flag("-w", help: "Print only the password."),
            .flag("-P", help: "Reads a secret from the next argument.").markedSecret(),
        ]
    )

    /// A required positional, then an optional one.
    static let copy = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy.",
        options: [force],
        positionals: [
            PositionalSpec(name: "source", help: "From."),
            PositionalSpec(name: "destination", help: "To.", optional: true),
        ]
    )

    /// A required variadic positional.
    static let remove = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove.",
        positionals: [PositionalSpec(name: "names", help: "Names.", variadic: true)]
    )

    /// Defines -h itself (as `security` does for a host in some verbs).
    static let connect = CommandConfiguration(
        commandName: "connect",
        abstract: "Connect.",
        options: [host]
    )

    private func parse(_ arguments: [String], _ configuration: CommandConfiguration = add) throws -> ParsedArguments {
        try ArgumentParser.parse(arguments, for: configuration)
    }

    /// The UsageError parsing `arguments` throws; fails the test when it parses.
    private func usageError(
        _ arguments: [String], _ configuration: CommandConfiguration = add,
        file: StaticString = #filePath, line: UInt = #line
    ) -> UsageError? {
        do {
            let parsed = try ArgumentParser.parse(arguments, for: configuration)
            XCTFail("parsed without error: \(parsed.positionals)", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }

    /// Parsing `arguments` fails with exactly `message`, which does not quote `secret` (a value
    /// typed where it should not be may be a password).
    private func assertUsageError(_ arguments: [String], _ configuration: CommandConfiguration = add, is message: String,
                                  hiding secret: String, file: StaticString = #filePath, line: UInt = #line) {
        let error = usageError(arguments, configuration, file: file, line: line)
        XCTAssertEqual(error?.message, message, file: file, line: line)
        XCTAssertEqual(error?.message.contains(secret), false, file: file, line: line)
    }

    // MARK: names and values

    func test_valueOption_isFound_byShortOrLongName() throws {
        let short = try parse(["-s", "vpn", "-a", "alice"])
        XCTAssertEqual(short.value(Self.service), "vpn")
        XCTAssertEqual(short.value(Self.service), "vpn")
        XCTAssertEqual(short.value(Self.service), "vpn")
        XCTAssertEqual(short.value(Self.account), "alice")

        let long = try parse(["--service", "vpn", "--account", "alice"])
        XCTAssertEqual(long.value(Self.service), "vpn")
        XCTAssertEqual(long.value(Self.account), "alice")
        XCTAssertNil(long.value(Self.password))
        XCTAssertEqual(long.positionals, [])
    }

    func test_flag_isTrue_byAnyName_onlyWhenGiven() throws {
        let given = try parse(["-U"])
        XCTAssertTrue(given.flag(Self.update))
        XCTAssertTrue(given.flag(Self.update))
        XCTAssertTrue(given.flag(Self.update))
        XCTAssertEqual(given.count(Self.update), 1)

        let absent = try parse([])
        XCTAssertFalse(absent.flag(Self.update))
        XCTAssertFalse(absent.flag(Self.update))
        XCTAssertFalse(absent.flag(Self.force), "an option the command does not declare is never given")
    }

    func test_longOption_withEquals_takesTheRestAsValue() throws {
        let parsed = try parse(["--service=vpn", "--account=a=b", "--password=-x"])
        XCTAssertEqual(parsed.value(Self.service), "vpn")
        XCTAssertEqual(parsed.value(Self.account), "a=b", "only the first '=' separates")
        XCTAssertEqual(parsed.value(Self.password), "-x", "a value after '=' may start with '-'")
    }

    func test_longOption_withEquals_acceptsAnEmptyValue() throws {
        let parsed = try parse(["--account="])
        XCTAssertEqual(parsed.value(Self.account), "")
        XCTAssertTrue(parsed.flag(Self.account))
    }

    func test_valueOption_takesNextToken_evenWhenItStartsWithADash() throws {
        let parsed = try parse(["-a", "-x", "-w", "--update", "-s", "-"])
        XCTAssertEqual(parsed.value(Self.account), "-x")
        XCTAssertEqual(parsed.value(Self.password), "--update")
        XCTAssertFalse(parsed.flag(Self.update), "--update was the password, not the flag")
        XCTAssertEqual(parsed.value(Self.service), "-")
    }

    func test_valueOption_takesDashH_asValue_notAsHelp() throws {
        let parsed = try parse(["-a", "-h"])
        XCTAssertEqual(parsed.value(Self.account), "-h")
        XCTAssertFalse(parsed.helpRequested)
    }

    func test_valueOption_lastOccurrenceWins_andAllAreKept() throws {
        let parsed = try parse(["-s", "first", "--service", "second", "--service=third"])
        XCTAssertEqual(parsed.value(Self.service), "third")
        XCTAssertEqual(parsed.values(Self.service), ["first", "second", "third"])
    }

    func test_repeatedOption_collectsEveryValue_inOrder() throws {
        let parsed = try parse(["-T", "/usr/bin/ssh", "--trusted-app", "/usr/bin/git", "--trusted-app=/bin/sh"])
        XCTAssertEqual(parsed.values(Self.trustedApp), ["/usr/bin/ssh", "/usr/bin/git", "/bin/sh"])
        XCTAssertEqual(parsed.value(Self.trustedApp), "/bin/sh")
        XCTAssertEqual(parsed.count(Self.trustedApp), 3)
        XCTAssertEqual(try parse([]).values(Self.trustedApp), [])
    }

    func test_optionsAndPositionals_mayBeInterleaved() throws {
        let parsed = try parse(["login.keychain", "-U", "-s", "vpn"])
        XCTAssertEqual(parsed.positionals, ["login.keychain"])
        XCTAssertEqual(parsed.positional("keychain"), "login.keychain")
        XCTAssertTrue(parsed.flag(Self.update))
        XCTAssertEqual(parsed.value(Self.service), "vpn")
    }

    // MARK: missing values and flags with values

    func test_valueOption_atTheEnd_failsNamingTheOptionAsTyped() {
        let long = usageError(["-U", "--service"])
        XCTAssertEqual(long?.message, "option --service needs a value")
        let short = usageError(["-s"])
        XCTAssertEqual(short?.message, "option -s needs a value")
    }

    func test_valueOption_beforeDoubleDash_needsAValue() {
        let error = usageError(["-s", "--", "cmd"])
        XCTAssertEqual(error?.message, "option -s needs a value")
    }

    func test_usageError_carriesTheCommandsUsageLine() {
        let error = usageError(["--service"])
        XCTAssertEqual(error?.usage, HelpFormatter.usageLine(for: Self.add, programName: "keygate"))
        XCTAssertEqual(
            error?.usage,
            "keygate add [-s <service>] [-a <account>] [-w <password>] [-U] [-T <path> ...] [<keychain>]"
        )
    }

    func test_usageError_usesTheGivenProgramName() {
        XCTAssertThrowsError(try ArgumentParser.parse(["--service"], for: Self.add, programName: "security")) { error in
            XCTAssertEqual((error as? UsageError)?.usage.hasPrefix("security add [-s <service>]"), true)
        }
    }

    func test_flag_givenAValue_fails_withoutQuotingTheValue() {
        assertUsageError(["--update=hunter2"], is: "option --update does not take a value", hiding: "hunter2")
    }

    // MARK: unknown options

    func test_unknownLongOption_suggestsTheClosestName() {
        XCTAssertEqual(usageError(["--servce", "vpn"])?.message, "unknown option '--servce' (did you mean '--service'?)")
        XCTAssertEqual(usageError(["--upadte"])?.message, "unknown option '--upadte' (did you mean '--update'?)")
        XCTAssertEqual(usageError(["-service", "x"])?.message, "unknown option '-service' (did you mean '--service'?)")
        XCTAssertEqual(usageError(["--hlep"])?.message, "unknown option '--hlep' (did you mean '--help'?)")
    }

    func test_unknownOption_farFromEveryName_hasNoSuggestion() {
        XCTAssertEqual(usageError(["--colour"])?.message, "unknown option '--colour'")
        XCTAssertEqual(usageError(["-x"])?.message, "unknown option '-x'")
    }

    func test_unknownShortOption_suggestsTheOtherCase() {
        XCTAssertEqual(usageError(["-u"])?.message, "unknown option '-u' (did you mean '-U'?)")
    }

    func test_unknownOption_withEquals_namesOnlyTheName() {
        assertUsageError(["--pasword=hunter2"], is: "unknown option '--pasword' (did you mean '--password'?)", hiding: "hunter2")
    }

    func test_shortOptions_areNotBundled() throws {
        let error = usageError(["-Uw", "secret"])
        XCTAssertEqual(
            error?.message,
            "unknown option starting with -U: short options cannot be combined; write each one separately"
        )
        let separate = try parse(["-U", "-w", "secret"])
        XCTAssertTrue(separate.flag(Self.update))
        XCTAssertEqual(separate.value(Self.password), "secret")
    }

    func test_shortValueOption_gluedToItsValue_fails_withoutQuotingIt() {
        assertUsageError(["-whunter2"], is: "option -w must be separated from its value: write '-w VALUE'", hiding: "hunter2")
    }

    func test_firstMistake_isTheOneReported() {
        XCTAssertEqual(usageError(["--bogus", "-s"])?.message, "unknown option '--bogus'")
        XCTAssertEqual(usageError(["a", "b", "--bogus"])?.message, "unknown option '--bogus'")
    }

    // MARK: double dash and the lone dash

    func test_doubleDash_endsOptions_andKeepsTheRestVerbatim() throws {
        let parsed = try parse(["-s", "vpn", "--", "-a", "b", "--", "--help"])
        XCTAssertEqual(parsed.value(Self.service), "vpn")
        XCTAssertEqual(parsed.afterDoubleDash, ["-a", "b", "--", "--help"])
        XCTAssertNil(parsed.value(Self.account))
        XCTAssertEqual(parsed.positionals, [], "tokens after -- are not positionals")
        XCTAssertFalse(parsed.helpRequested)
    }

    func test_doubleDash_atTheEnd_leavesNothingAfter() throws {
        let parsed = try parse(["-U", "--"])
        XCTAssertEqual(parsed.afterDoubleDash, [])
        XCTAssertTrue(parsed.flag(Self.update))
    }

    func test_loneDash_isAPositional() throws {
        let parsed = try parse(["-"])
        XCTAssertEqual(parsed.positionals, ["-"])
        XCTAssertEqual(parsed.positional("keychain"), "-")
    }

    // MARK: positionals

    func test_tooManyPositionals_fails_quotingTheFirstExtra() {
        let error = usageError(["one", "two", "three"])
        XCTAssertEqual(error?.message, "unexpected argument 'two'")
    }

    func test_positional_withNoPositionalsDeclared_fails() {
        XCTAssertEqual(usageError(["-s", "vpn", "extra"], Self.find)?.message, "unexpected argument 'extra'")
    }

    func test_unexpectedArgument_of40Characters_isNotQuoted() {
        let long = String(repeating: "k", count: 40)
        let error = usageError(["one", long])
        XCTAssertEqual(error?.message, "unexpected argument (40 characters, not shown)")
        let shorter = String(repeating: "k", count: 39)
        XCTAssertEqual(usageError(["one", shorter])?.message, "unexpected argument '\(shorter)'")
    }

    func test_unexpectedArgument_afterDashW_isNotQuoted() {
        // find's -w is a flag; people still type `-w hunter2`.
        assertUsageError(["-s", "vpn", "-w", "hunter2"], Self.find, is: "unexpected argument (7 characters, not shown)", hiding: "hunter2")
    }

    func test_unexpectedArgument_afterAnOptionMarkedSecret_isNotQuoted() {
        let error = usageError(["-P", "x"], Self.find)
        XCTAssertEqual(error?.message, "unexpected argument (1 character, not shown)")
    }

    func test_unknownOption_afterDashW_isNotQuoted() {
        assertUsageError(["-w", "-hunter2"], Self.find, is: "unknown option (8 characters, not shown)", hiding: "hunter2")
    }

    func test_argumentWithControlCharacters_isNotQuoted() {
        assertUsageError(["one", "\u{1B}[2Jx"], is: "unexpected argument (5 characters, not shown)", hiding: "\u{1B}")
    }

    func test_missingRequiredPositional_failsNamingIt() {
        XCTAssertEqual(usageError(["-f"], Self.copy)?.message, "missing argument <source>")
    }

    func test_optionalPositional_mayBeLeftOut() throws {
        let parsed = try parse(["a.txt", "-f"], Self.copy)
        XCTAssertEqual(parsed.positional("source"), "a.txt")
        XCTAssertNil(parsed.positional("destination"))
        XCTAssertEqual(usageError(["a", "b", "c"], Self.copy)?.message, "unexpected argument 'c'")
    }

    func test_variadicPositional_takesEveryRemainingArgument() throws {
        let parsed = try parse(["a", "b", "-", "c"], Self.remove)
        XCTAssertEqual(parsed.positionals, ["a", "b", "-", "c"])
        XCTAssertEqual(parsed.positionalValues("names"), ["a", "b", "-", "c"])
    }

    func test_requiredVariadicPositional_needsAtLeastOne() {
        XCTAssertEqual(usageError([], Self.remove)?.message, "missing argument <names>")
    }

    // MARK: help

    func test_help_isReported_notFailed() throws {
        XCTAssertTrue(try parse(["-h"]).helpRequested)
        XCTAssertTrue(try parse(["-s", "vpn", "--help"]).helpRequested)
        XCTAssertFalse(try parse(["-s", "vpn"]).helpRequested)
    }

    func test_help_winsOverEveryOtherMistake() throws {
        XCTAssertTrue(try parse(["--bogus", "a", "b", "c", "--help"]).helpRequested)
        XCTAssertTrue(try parse(["-h"], Self.remove).helpRequested, "a missing positional is not reported either")
        XCTAssertTrue(try parse(["--help", "-s"]).helpRequested, "nor is a missing value")
    }

    func test_help_definedByTheConfiguration_isAnOrdinaryOption() throws {
        let parsed = try parse(["-h", "example.org"], Self.connect)
        XCTAssertFalse(parsed.helpRequested)
        XCTAssertEqual(parsed.value(Self.host), "example.org")
        XCTAssertTrue(try parse(["--help"], Self.connect).helpRequested, "--help is still free")
    }
}

final class ConfigurationCheckTests: XCTestCase {
    func test_sampleConfigurations_haveNoProblems() {
        for configuration in [ArgumentParserTests.add, ArgumentParserTests.find, ArgumentParserTests.copy,
                              ArgumentParserTests.remove, ArgumentParserTests.connect] {
            XCTAssertEqual(configuration.configurationProblems, [], configuration.commandName)
        }
    }

    func test_configurationProblems_findsDuplicatesBadNamesAndMisorderedPositionals() {
        let bad = CommandConfiguration(
            commandName: "bad",
            abstract: "",
            options: [.flag("-s", help: ""), .value("-s", "service", valueName: "s", help: "")],
            positionals: [
                PositionalSpec(name: "rest", help: "", variadic: true),
                PositionalSpec(name: "maybe", help: "", optional: true),
                PositionalSpec(name: "needed", help: ""),
            ]
        )
        XCTAssertEqual(bad.configurationProblems, [
            "bad: option name -s is used twice",
            "bad: 'service' is not a valid option name",
            "bad: variadic <rest> must be the last positional",
            "bad: required <needed> follows an optional positional",
        ])
        let parent = CommandConfiguration(commandName: "keygate", abstract: "", subcommands: [bad])
        XCTAssertEqual(parent.configurationProblems.count, 4, "subcommands are checked too")
    }
}

/// The options before the verb go through the same parser, once, against the top-level configuration.
final class LeadingOptionsTests: XCTestCase {
    private func leading(_ arguments: [String]) throws -> (options: ParsedArguments, rest: [String]) {
        try ArgumentParser.parseLeadingOptions(arguments, for: KeygateMain.topLevel, programName: "keygate")
    }

    func test_leadingOptions_stopAtTheVerb_andLeaveItsOptionsAlone() throws {
        let parsed = try leading(["--askpass", "/bin/ask", "--verbose", "get", "-s", "svc", "--verbose"])
        XCTAssertEqual(parsed.options.value(GlobalOptions.askpass), "/bin/ask")
        XCTAssertTrue(parsed.options.flag(GlobalOptions.verbose))
        XCTAssertFalse(parsed.options.flag(GlobalOptions.pinentry))
        XCTAssertEqual(parsed.rest, ["get", "-s", "svc", "--verbose"])
    }

    func test_leadingOptions_takeAnInlineValue_andKeepTheirOrder() throws {
        let parsed = try leading(["--no-unlock-prompt", "--askpass=/bin/ask", "--help", "--version", "list"])
        XCTAssertEqual(parsed.options.value(GlobalOptions.askpass), "/bin/ask")
        XCTAssertTrue(parsed.options.flag(GlobalOptions.noUnlockPrompt))
        XCTAssertEqual(parsed.options.sequence.map(\.key), ["--no-unlock-prompt", "--askpass", "--help", "--version"])
        XCTAssertEqual(parsed.rest, ["list"])
    }

    func test_leadingOptions_reportAnUnknownOption_andAMissingValue() {
        XCTAssertThrowsError(try leading(["--bogus", "get"])) { error in
            XCTAssertEqual((error as? UsageError)?.message.hasPrefix("unknown option '--bogus'"), true, "\(error)")
        }
        XCTAssertThrowsError(try leading(["--askpass"])) { error in
            XCTAssertEqual((error as? UsageError)?.message, "option --askpass needs a value")
        }
    }

    func test_noVerb_leavesNothing_andADash_orDoubleDash_endsTheOptions() throws {
        XCTAssertEqual(try leading(["--verbose"]).rest, [])
        XCTAssertEqual(try leading(["--", "get"]).rest, ["--", "get"])
        XCTAssertEqual(try leading(["-", "get"]).rest, ["-", "get"])
    }
}
