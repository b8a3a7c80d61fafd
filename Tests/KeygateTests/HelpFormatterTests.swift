// Tests for HelpFormatter: the help text word for word (sections, column
// alignment, wrapping at 80) and the usage line, generated and custom.
import XCTest
@testable import KeygateCLI

final class HelpFormatterTests: XCTestCase {
    static let get = CommandConfiguration(
        commandName: "get",
        abstract: "Print a generic password from the keychain.",
        discussion: """
            Finds the item by service and account and prints its secret. Reading the secret may ask for your password first, as the item's access control and the policies say.

            Exit status 44 means no such item.
            """,
        aliases: ["find-generic-password"],
        options: [
            .value("-s", "--service", valueName: "service", help: "The service the item belongs to."),
            .value("-a", "--account", valueName: "account", help: "The account name."),
            .flag("-w", help: "Print only the password, with no attributes; this is what scripts want when they read a secret into a variable."),
            .flag("-U", "--update", help: "Update the item if it exists."),
            .repeated("-T", "--trusted-app", valueName: "path", help: "A program allowed to read the item without asking."),
        ],
        positionals: [PositionalSpec(name: "keychain", help: "The keychain to search.", optional: true)]
    )

    static let lock = CommandConfiguration(
        commandName: "lock",
        abstract: "Forget cached keys so that the next read asks again.",
        options: [.flag("--all", help: "Forget them in every scope, like sudo -K.")]
    )

    static let top = CommandConfiguration(
        commandName: "keygate",
        abstract: "Keychain items with access control, for Linux.",
        subcommands: [get, lock]
    )

    func test_commandHelp_isExact() {
        let expected = """
            OVERVIEW: Print a generic password from the keychain.

            Finds the item by service and account and prints its secret. Reading the secret
            may ask for your password first, as the item's access control and the policies
            say.

            Exit status 44 means no such item.

            USAGE: keygate get [-s <service>] [-a <account>] [-w] [-U] [-T <path> ...]
                               [<keychain>]

            OPTIONS:
              -s, --service <service>  The service the item belongs to.
              -a, --account <account>  The account name.
              -w                       Print only the password, with no attributes; this is
                                       what scripts want when they read a secret into a
                                       variable.
              -U, --update             Update the item if it exists.
              -T, --trusted-app <path> ...
                                       A program allowed to read the item without asking.
              -h, --help               Show help information.

            POSITIONAL ARGUMENTS:
              <keychain>               The keychain to search.
            """
        XCTAssertEqual(HelpFormatter.help(for: Self.get, programName: "keygate"), expected)
    }

    func test_topLevelHelp_listsSubcommandsWithAliases_isExact() {
        let expected = """
            OVERVIEW: Keychain items with access control, for Linux.

            USAGE: keygate <subcommand>

            OPTIONS:
              -h, --help                  Show help information.

            SUBCOMMANDS:
              get, find-generic-password  Print a generic password from the keychain.
              lock                        Forget cached keys so that the next read asks
                                          again.

              See 'keygate <subcommand> --help' for detailed help.
            """
        XCTAssertEqual(HelpFormatter.help(for: Self.top, programName: "keygate"), expected)
    }

    func test_help_withoutDiscussionOrPositionals_hasOnlyItsSections() {
        let expected = """
            OVERVIEW: Forget cached keys so that the next read asks again.

            USAGE: keygate lock [--all]

            OPTIONS:
              --all       Forget them in every scope, like sudo -K.
              -h, --help  Show help information.
            """
        XCTAssertEqual(HelpFormatter.help(for: Self.lock, programName: "keygate"), expected)
    }

    func test_help_neverHasTrailingSpaces_orLinesOver80() {
        for configuration in [Self.get, Self.lock, Self.top] {
            let help = HelpFormatter.help(for: configuration, programName: "keygate")
            for line in help.split(separator: "\n", omittingEmptySubsequences: false) {
                XCTAssertFalse(line.hasSuffix(" "), "trailing space in: \(line)")
                XCTAssertLessThanOrEqual(line.count, 80, "too long: \(line)")
            }
        }
    }

    func test_help_omitsHelpNamesTheCommandUsesItself() {
        let connect = CommandConfiguration(
            commandName: "connect",
            abstract: "Connect.",
            options: [.value("-h", "--host", valueName: "host", help: "The host.")]
        )
        let expected = """
            OVERVIEW: Connect.

            USAGE: keygate connect [-h <host>]

            OPTIONS:
              -h, --host <host>  The host.
              --help             Show help information.
            """
        XCTAssertEqual(HelpFormatter.help(for: connect, programName: "keygate"), expected)
    }

    func test_usageLine_isOneLine_withEveryKindOfArgument() {
        let configuration = CommandConfiguration(
            commandName: "exec",
            abstract: "Run a program.",
            options: [.repeated("-e", "--env", valueName: "name", help: "")],
            positionals: [
                PositionalSpec(name: "program", help: ""),
                PositionalSpec(name: "arguments", help: "", optional: true, variadic: true),
            ]
        )
        XCTAssertEqual(
            HelpFormatter.usageLine(for: configuration, programName: "keygate"),
            "keygate exec [-e <name> ...] <program> [<arguments> ...]"
        )
        XCTAssertEqual(HelpFormatter.usageLine(for: Self.top, programName: "keygate"), "keygate <subcommand>")
    }

    func test_customUsage_replacesTheSynopsis_andWrapsBetweenGroups() {
        let configuration = CommandConfiguration(
            commandName: "add-generic-password",
            abstract: "",
            usage: "[-a account] [-s service] [-w password] [-U] [-T appPath] [-l label] [-j comment] [keychain]"
        )
        XCTAssertEqual(
            HelpFormatter.usageLine(for: configuration, programName: "keygate"),
            "keygate add-generic-password [-a account] [-s service] [-w password] [-U] [-T appPath] [-l label] [-j comment] [keychain]"
        )
        let expected = """
            USAGE: keygate add-generic-password [-a account] [-s service] [-w password] [-U]
                                                [-T appPath] [-l label] [-j comment]
                                                [keychain]

            OPTIONS:
              -h, --help  Show help information.
            """
        XCTAssertEqual(HelpFormatter.help(for: configuration, programName: "keygate"), expected)
    }

    func test_usageError_description_printsMessageAndUsage() {
        let error = UsageError("option --service needs a value", for: Self.lock)
        XCTAssertEqual(error.description, "error: option --service needs a value\nUSAGE: keygate lock [--all]")
    }

    func test_nameSuggestion_distance_countsATranspositionAsOneEdit() {
        XCTAssertEqual(NameSuggestion.distance("--lable", "--label"), 1)
        XCTAssertEqual(NameSuggestion.distance("kitten", "sitting"), 3)
        XCTAssertEqual(NameSuggestion.distance("", "abc"), 3)
        XCTAssertEqual(NameSuggestion.distance("same", "same"), 0)
        XCTAssertEqual(NameSuggestion.distance("ca", "abc"), 3, "OSA edits a transposed pair no further")
    }

    func test_nameSuggestion_distance_agreesWithTheFullTable_onRandomPairs() {
        // The full (n+1) x (m+1) table, as the textbook writes it; the product keeps three rows.
        func reference(_ a: String, _ b: String) -> Int {
            let s = Array(a), t = Array(b)
            var d = [[Int]](repeating: [Int](repeating: 0, count: t.count + 1), count: s.count + 1)
            for i in 0...s.count { d[i][0] = i }
            for j in 0...t.count { d[0][j] = j }
            for i in stride(from: 1, through: s.count, by: 1) {
                for j in stride(from: 1, through: t.count, by: 1) {
                    d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (s[i - 1] == t[j - 1] ? 0 : 1))
                    if i > 1, j > 1, s[i - 1] == t[j - 2], s[i - 2] == t[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
                }
            }
            return d[s.count][t.count]
        }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab-c")
        func word() -> String { String((0..<Int.random(in: 0...7, using: &generator)).map { _ in alphabet.randomElement(using: &generator) ?? "a" }) }
        for _ in 0..<3000 {
            let a = word(), b = word()
            XCTAssertEqual(NameSuggestion.distance(a, b), reference(a, b), "\(a) vs \(b)")
        }
    }

    func test_nameSuggestion_skipsNamesWhoseLengthAloneRulesThemOut() {
        XCTAssertEqual(NameSuggestion.closest(to: "--servce", among: ["--service", "--account"]), "--service")
        XCTAssertNil(NameSuggestion.closest(to: "--service" + String(repeating: "x", count: 3), among: ["--service"]))
        XCTAssertNil(NameSuggestion.closest(to: "--" + String(repeating: "s", count: 4096), among: ["--service", "--account"]))
    }
}
