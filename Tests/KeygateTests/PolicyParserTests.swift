// The policy-file parser: what each construct means, every value form, and the exact
// file:line:column (and what was expected) for a set of malformed files: one Swift Testing case
// a file, since every such check is the same four expectations over another input.
import Testing
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class PolicyParserTests: XCTestCase {
    private func parse(_ text: String) -> ParsedPolicy { PolicyParser.parse(text, file: "t.policy") }

    private func assertError(_ text: String, at line: Int, _ column: Int, mentions words: [String],
                             file: StaticString = #filePath, sourceLine: UInt = #line) {
        let errors = parse(text).errors
        guard let first = errors.first else {
            XCTFail("expected an error at \(line):\(column) for:\n\(text)", file: file, line: sourceLine)
            return
        }
        XCTAssertEqual(first.file, "t.policy", file: file, line: sourceLine)
        XCTAssertEqual("\(first.line):\(first.column)", "\(line):\(column)", first.description, file: file, line: sourceLine)
        for word in words {
            XCTAssertTrue(first.message.contains(word), "\"\(first.message)\" should mention \(word)", file: file, line: sourceLine)
        }
        XCTAssertTrue(first.description.hasPrefix("t.policy:\(line):\(column): "), first.description, file: file, line: sourceLine)
    }

    // MARK: - well-formed

    func test_parse_readsEverySectionForm_andEveryKey() throws {
        let parsed = parse("""
            # comment
            ; another comment
            [default]
            access = device-passcode, current-set and
            accessible = when-unlocked-this-device-only
            reuse-duration = 5m
            reuse-scope = ppid
            pam-service = keygate-passcode
            prompt = "Unlock the VPN"
            max-tries = 2
            lockout = 1h
            lock-after = 90s
            allow-non-interactive = yes

            [service "vpn*"]
            prompt = Unquoted text, kept as is
            [account "alice"]
            access = none
              [ service "ssh"   account "deploy@?" ]\t
            access = userPresence
            """)
        XCTAssertEqual(parsed.errors, [])
        XCTAssertEqual(parsed.sections.map(\.title),
                       ["[default]", "[service \"vpn*\"]", "[account \"alice\"]", "[service \"ssh\" account \"deploy@?\"]"])
        let s = parsed.sections[0].settings
        XCTAssertEqual(s.bothAccess, [.devicePasscode, .currentSet, .and])
        XCTAssertEqual(s.accessible, .whenUnlockedThisDeviceOnly)
        XCTAssertEqual(s.reuseDuration, 300)
        XCTAssertEqual(s.reuseScope, .ppid)
        XCTAssertEqual(s.pamService, "keygate-passcode")
        XCTAssertEqual(s.prompt, "Unlock the VPN")
        XCTAssertEqual(s.maxTries, 2)
        XCTAssertEqual(s.lockout, 3600)
        XCTAssertEqual(s.lockAfter, 90)
        XCTAssertEqual(s.allowNonInteractive, true)
        XCTAssertEqual(parsed.sections[0].keyLines[.reuseDuration], 6)
        XCTAssertEqual(parsed.sections[1].settings.prompt, "Unquoted text, kept as is")
        XCTAssertEqual(parsed.sections[2].settings.bothAccess, AccessControl(), "none is an explicit empty set")
        XCTAssertEqual(parsed.sections[3].settings.bothAccess, .userPresence)
        XCTAssertEqual(parsed.sections[3].line, 19)
    }

    func test_policyKeyMap_givesEveryKeyItsOwnSlot() {
        XCTAssertEqual(PolicyKey.allCases.map(\.position), Array(0..<PolicyKey.count),
                       "each key's position is its place in declaration order")
        var map = PolicyKeyMap<Int>()
        for (n, key) in PolicyKey.allCases.enumerated() { map[key] = n * 10 }
        for (n, key) in PolicyKey.allCases.enumerated() { XCTAssertEqual(map[key], n * 10, key.rawValue) }
        map[.lockout] = nil
        XCTAssertNil(map[.lockout])
        XCTAssertEqual(map[.lockAfter], PolicyKey.lockAfter.position * 10)
    }

    func test_parse_acceptsCRLF_andAFileWithoutFinalNewline() {
        let parsed = parse("[default]\r\nmax-tries = 2\r\nlockout = 7")
        XCTAssertEqual(parsed.errors, [])
        XCTAssertEqual(parsed.sections.first?.settings.maxTries, 2)
        XCTAssertEqual(parsed.sections.first?.settings.lockout, 7)
    }

    func test_accessForms_orAndStoredForm() {
        XCTAssertEqual(parse("[default]\naccess = device-passcode,biometry-any or").sections.first?.settings.bothAccess,
                       [.devicePasscode, .biometryAny, .or])
        XCTAssertEqual(parse("[default]\naccess = device-passcode,current-set;and").sections.first?.settings.bothAccess,
                       [.devicePasscode, .currentSet, .and])
    }

    /// AccessControl's advice names the CLI's flags (--or, --and); in a policy file the words
    /// are `or` and `and`, and the message says so.
    func test_accessErrors_nameThePolicyWords_notTheCLIFlags() {
        let errors = parse("[default]\naccess = user-presence,biometry-any").errors
        let message = errors.first?.message ?? ""
        XCTAssertTrue(message.contains("device-passcode,biometry-any or"), message)
        XCTAssertFalse(message.contains("--"), message)
    }

    func test_containsText_findsBytesAnywhere() {
        XCTAssertTrue("[keygate] for al (your previous password): ".containsText("(your previous password)"))
        XCTAssertTrue("abc".containsText("abc") && "abc".containsText("") && "xxab".containsText("ab"))
        XCTAssertFalse("ab".containsText("abc") || "abd".containsText("abc") || "".containsText("a"))
        XCTAssertTrue("café key".containsText("é k"))
    }

    func test_accessShorthand_setsDefaultAndMinimum_andClashesWithEither() {
        let parsed = parse("[default]\naccess = device-passcode\n[service \"x\"]\ndefault-access = none\nminimum-access = user-presence\n")
        XCTAssertEqual(parsed.errors, [])
        XCTAssertEqual(parsed.sections[0].settings.defaultAccess, .devicePasscode)
        XCTAssertEqual(parsed.sections[0].settings.minimumAccess, .devicePasscode)
        XCTAssertEqual(parsed.sections[0].keyLines[.minimumAccess], 2)
        XCTAssertEqual(parsed.sections[1].settings.defaultAccess, AccessControl())
        XCTAssertEqual(parsed.sections[1].settings.minimumAccess, .userPresence)
        assertError("[default]\nminimum-access = user-presence\naccess = none\n", at: 3, 1,
                    mentions: ["duplicate key \"access\"", "first set at line 2", "default-access and minimum-access"])
        assertError("[default]\naccess = none\ndefault-access = user-presence\n", at: 3, 1,
                    mentions: ["duplicate key \"default-access\"", "`access` sets default-access too"])
        assertError("[default]\nminimum_access = none\n", at: 2, 1, mentions: ["did you mean \"minimum-access\"?"])
    }

    func test_accessForms_blanksCommasAndTheLastWord() {
        // Blanks and commas both separate names; empty names are dropped; `and` / `or` in any case.
        XCTAssertEqual(parse("[default]\naccess = device-passcode\t current-set   OR").sections.first?.settings.bothAccess,
                       [.devicePasscode, .currentSet, .or])
        XCTAssertEqual(parse("[default]\naccess = , device-passcode,,current-set And").sections.first?.settings.bothAccess,
                       [.devicePasscode, .currentSet, .and])
        XCTAssertEqual(parse("[default]\naccess = device-passcode,and").sections.first?.settings.bothAccess, nil,
                       "`and` joined to a name by a comma is a name, not the operator")
        // `and` alone is a name, and not a constraint Keygate knows.
        assertError("[default]\naccess = and\n", at: 2, 10, mentions: ["unknown access constraint \"and\""])
    }

    // MARK: - malformed files: exact locations

    func test_error_controlCharacterAndInvalidUTF8_atTheByte() {
        assertError("[default]\nprompt = a\u{1B}[2Jb\n", at: 2, 11, mentions: ["control character"])
        assertError("[default]\nprompt = a\u{7F}b\n", at: 2, 11, mentions: ["control character"])
        let accepted = PolicyParser.parse("[default]\nprompt = Entrez le mot de passe \u{E9}t\u{E9}\n", file: "t.policy")
        XCTAssertEqual(accepted.errors, [], "UTF-8 beyond ASCII is text")
        let bytes: [UInt8] = Array("[default]\nprompt = ab".utf8) + [0xC3, 0x28] + Array("\n".utf8)
        let errors = PolicyParser.parse(bytes, file: "t.policy").errors
        XCTAssertEqual(errors.first.map { "\($0.line):\($0.column)" }, "2:12")
        XCTAssertTrue(errors.first?.message.contains("UTF-8") ?? false)
    }

    func test_errors_areAllReported_notJustTheFirst() {
        let errors = parse("[default]\nfoo = 1\nmax-tries = x\n[bar]\nlockout = 1\n").errors
        XCTAssertEqual(errors.map(\.line), [2, 3, 4], "one error per bad line; a key under a broken header is not a second error")
    }

    func test_oversizeInput_isOneError() {
        let big = "[default]\n" + String(repeating: "# padding\n", count: 7000)
        let errors = parse(big).errors
        XCTAssertEqual(errors.count, 1)
        XCTAssertTrue(errors.first?.message.contains("64 KiB") ?? false)
    }

    // MARK: - globs

    func test_glob_starAndQuestionMark_noCharacterClasses() {
        XCTAssertTrue(PolicyGlob("vpn*").matches("vpn"))
        XCTAssertTrue(PolicyGlob("vpn*").matches("vpn-office"))
        XCTAssertFalse(PolicyGlob("vpn*").matches("myvpn"))
        XCTAssertTrue(PolicyGlob("*a*b").matches("xxaxxab"))
        XCTAssertTrue(PolicyGlob("d?ploy").matches("deploy"))
        XCTAssertFalse(PolicyGlob("d?ploy").matches("dploy"))
        XCTAssertTrue(PolicyGlob("[x]").matches("[x]"), "brackets are literal")
        XCTAssertFalse(PolicyGlob("[x]").matches("x"))
        XCTAssertTrue(PolicyGlob("*").matches(""))
        XCTAssertTrue(PolicyGlob("é?").matches("éü"), "? is one character, not one byte")
    }

    func test_glob_specificity_exact_fewerWildcards_moreLiterals() {
        let ordered = ["*", "v*n*", "vpn*", "vpn-?", "vpn"].map { PolicyGlob($0).specificity }
        XCTAssertEqual(ordered, ordered.sorted())
        XCTAssertLessThan(PolicyGlob("**").specificity, PolicyGlob("a*").specificity)
    }

    func test_glob_pathologicalPattern_isFast() {
        let pattern = PolicyGlob(String(repeating: "*a", count: 200) + "b")
        let text = String(repeating: "a", count: 5000)
        let clock = ContinuousClock()
        let took = clock.measure { XCTAssertFalse(pattern.matches(text)) }
        XCTAssertLessThan(took, .seconds(2))
    }
}

/// A malformed policy file, and where its first error must point and what it must say. `why`
/// names what the row shows; it is the case's name in the test report.
struct MalformedPolicy: Sendable, CustomTestStringConvertible {
    let why: String
    let text: String
    let line: Int
    let column: Int
    let mentions: [String]

    init(_ why: String, _ text: String, at line: Int, _ column: Int, mentions: [String]) {
        (self.why, self.text, self.line, self.column, self.mentions) = (why, text, line, column, mentions)
    }

    var testDescription: String { "\(why): \(text.debugDescription)" }
}

struct PolicyParserErrorTests {
    static let malformed: [MalformedPolicy] = [
        MalformedPolicy("missingEquals_pointsAfterTheKey", "[default]\nmax-tries 3\n", at: 2, 11, mentions: ["expected `=`", "max-tries"]),
        MalformedPolicy("keyWithNothingAfterIt_saysEqualsAndValueExpected", "[default]\n  lockout\n", at: 2, 10, mentions: ["expected `= VALUE`"]),
        MalformedPolicy("unknownKey_atTheKey_withSuggestionAndValidKeys", "[default]\nreuse_duration = 3\n", at: 2, 1, mentions: ["unknown key \"reuse_duration\"", "did you mean \"reuse-duration\"", "lock-after"]),
        MalformedPolicy("badDuration_pointsAtTheBadCharacter", "[default]\nreuse-duration = 30x\n", at: 2, 20, mentions: ["expected a number of seconds", "5m"]),
        MalformedPolicy("badDuration_pointsAtTheBadCharacter", "[default]\nlock-after = 300 # five minutes\n", at: 2, 17, mentions: ["comments go on their own line"]),
        MalformedPolicy("duplicateKey_namesTheFirstLine", "[default]\nmax-tries = 3\n\nmax-tries = 4\n", at: 4, 1, mentions: ["duplicate key \"max-tries\"", "line 2"]),
        MalformedPolicy("unterminatedSection_atTheEndOfTheLine", "[default\nmax-tries = 3\n", at: 1, 9, mentions: ["unterminated section header", "`]`"]),
        MalformedPolicy("unterminatedQuotedGlob_atTheOpeningQuote", "[service \"vpn*]\n", at: 1, 10, mentions: ["unterminated quoted glob"]),
        MalformedPolicy("unknownSectionKind_listsTheForms", "# vpn\n[vpn]\n", at: 2, 2, mentions: ["unknown section \"vpn\"", "[service \"GLOB\"]", "[default]"]),
        MalformedPolicy("keyBeforeAnySection", "\n\nlockout = 60\n", at: 3, 1, mentions: ["outside any section", "[default]"]),
        MalformedPolicy("badAccessCombination_carriesApplesReason", "[service \"x\"]\naccess = user-presence,current-set\n", at: 2, 10, mentions: ["user-presence cannot be combined"]),
        MalformedPolicy("badAccessCombination_carriesApplesReason", "[default]\naccess = face-id\n", at: 2, 10, mentions: ["unknown access constraint \"face-id\""]),
        MalformedPolicy("badEnumValues_listTheChoices", "[default]\naccessible = always\n", at: 2, 14, mentions: ["after-first-unlock"]),
        MalformedPolicy("badEnumValues_listTheChoices", "[default]\nreuse-scope = forever\n", at: 2, 15, mentions: ["tty, ppid, session or global"]),
        MalformedPolicy("badEnumValues_listTheChoices", "[default]\nallow-non-interactive = maybe\n", at: 2, 25, mentions: ["yes, no"]),
        MalformedPolicy("badEnumValues_listTheChoices", "[default]\nmax-tries = 0\n", at: 2, 13, mentions: ["1 to 100"]),
        MalformedPolicy("badEnumValues_listTheChoices", "[default]\npam-service = ../../tmp/evil\n", at: 2, 15, mentions: ["PAM service name"]),
        MalformedPolicy("emptyValue_andUnterminatedPromptQuote", "[default]\nprompt =   \n", at: 2, 12, mentions: ["expected a value"]),
        MalformedPolicy("emptyValue_andUnterminatedPromptQuote", "[default]\nprompt = \"Unlock\n", at: 2, 17, mentions: ["closing `\"`"]),
        MalformedPolicy("textAfterHeader_andDefaultWithGlob", "[default] # all\n", at: 1, 11, mentions: ["unexpected text after `]`"]),
        MalformedPolicy("textAfterHeader_andDefaultWithGlob", "[default service \"x\"]\n", at: 1, 10, mentions: ["[default] takes no globs"]),
        MalformedPolicy("textAfterHeader_andDefaultWithGlob", "[service \"a\" service \"b\"]\n", at: 1, 14, mentions: ["given twice"]),
        MalformedPolicy("textAfterHeader_andDefaultWithGlob", "[service \"\"]\n", at: 1, 10, mentions: ["expected a glob"]),
        MalformedPolicy("textAfterHeader_andDefaultWithGlob", "[ ]\n", at: 1, 3, mentions: ["empty section header"]),
        MalformedPolicy("duplicateSection_sameMatchAsDefault", "[default]\nlockout = 1\n[service \"*\"]\n", at: 3, 1, mentions: ["duplicate section", "[default] at line 1"]),
    ]

    @Test(arguments: malformed)
    func theFirstError_pointsAtTheMistake_andSaysWhatWasExpected(_ policy: MalformedPolicy) throws {
        let first = try #require(PolicyParser.parse(policy.text, file: "t.policy").errors.first,
                                 "expected an error at \(policy.line):\(policy.column) for:\n\(policy.text)")
        #expect(first.file == "t.policy")
        #expect("\(first.line):\(first.column)" == "\(policy.line):\(policy.column)", "\(first.description)")
        for word in policy.mentions {
            #expect(first.message.contains(word), "\"\(first.message)\" should mention \(word)")
        }
        #expect(first.description.hasPrefix("t.policy:\(policy.line):\(policy.column): "), "\(first.description)")
    }
}
