// PinentryPrompter against a pinentry stand-in (a shell script speaking Assuan on
// its stdin/stdout) that records every command it receives: the greeting is read,
// the reason becomes SETDESC (percent-escaped), the PIN's %XX escapes are decoded,
// a cancel is nil, and BYE ends the session. SystemPrompter picks pinentry for
// --pinentry and KEYGATE_PINENTRY.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class PinentryPrompterTests: XCTestCase {
    private var folder = ""
    private var log: String { folder + "/received" }
    private let env = ["PATH": "/usr/bin:/bin"]

    override func setUpWithError() throws {
        folder = try makeTemporaryFolder(self)
    }

    /// A pinentry stand-in; `getpin` is what it answers to GETPIN (Assuan lines).
    private func fakePinentry(getpin: String) throws -> String {
        let path = folder + "/pinentry"
        let script = """
            #!/bin/sh
            echo "OK Pleased to meet you"
            while IFS= read -r line; do
              printf '%s\\n' "$line" >> '\(log)'
              case "$line" in
                GETPIN) printf '\(getpin)';;
                BYE) echo "OK closing connection"; exit 0;;
                *) echo OK;;
              esac
            done
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        return path
    }

    private func received() -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    func test_readSecret_decodesEscapes_andSendsTheReasonAsSETDESC() throws {
        let program = try fakePinentry(getpin: "S PASSWORD_FROM_CACHE\\nD p%%25ss%%0Aword\\nOK\\n")
        let pin = try PinentryPrompter(program: program, environment: KeygateEnvironment(env))
            .readSecret(prompt: "[keygate] Read the VPN key, 100% sure\nPassword for alice: ")
        XCTAssertEqual(pin?.unprotectedCopy(), Array("p%ss\nword".utf8))
        let lines = received()
        XCTAssertTrue(lines.contains("SETTITLE Keygate"), "\(lines)")
        XCTAssertTrue(lines.contains("SETDESC Read the VPN key, 100%25 sure"), "\(lines)")
        XCTAssertTrue(lines.contains("SETPROMPT Password for alice:"), "\(lines)")
        XCTAssertEqual(lines.suffix(2), ["GETPIN", "BYE"], "GETPIN comes last, then BYE: \(lines)")
    }

    /// gpg-agent's options: without lc-ctype, pinentry-curses says "no LC_CTYPE known".
    func test_readSecret_sendsTheLocale_likeGpgAgent() throws {
        let program = try fakePinentry(getpin: "D pw\\nOK\\n")
        _ = try PinentryPrompter(program: program, environment: KeygateEnvironment(env.merging(["LANG": "en_GB.UTF-8", "LC_MESSAGES": "C"]) { $1 }))
            .readSecret(prompt: "Password for alice: ")
        let lines = received()
        XCTAssertTrue(lines.contains("OPTION lc-ctype=en_GB.UTF-8"), "\(lines)")
        XCTAssertTrue(lines.contains("OPTION lc-messages=C"), "\(lines)")
        XCTAssertEqual(PinentryPrompter.options(environment: ["LC_ALL": "de_DE.UTF-8", "LANG": "C", "TERM": "xterm"],
                                                terminal: "/dev/pts/3"),
                       ["ttyname=/dev/pts/3", "ttytype=xterm", "lc-ctype=de_DE.UTF-8", "lc-messages=de_DE.UTF-8"])
        XCTAssertEqual(PinentryPrompter.options(environment: [:], terminal: nil), [])
    }

    /// Each of Keygate's prompts gets a dialog of its own, not "Keygate needs your password".
    func test_recoveryKey_andNewSecret_haveTheirOwnTitleAndDescription() throws {
        let program = try fakePinentry(getpin: "D key\\nOK\\n")
        _ = try PinentryPrompter(program: program, environment: KeygateEnvironment(env)).readSecret(prompt: "Recovery key: ")
        let lines = received()
        XCTAssertTrue(lines.contains("SETTITLE Keygate: recovery key"), "\(lines)")
        XCTAssertTrue(lines.contains { $0.hasPrefix("SETDESC Type the recovery key") }, "\(lines)")
        XCTAssertFalse(lines.contains { $0.contains("needs your password") }, "\(lines)")
        let secret = PinentryPrompter.dialog(for: "Secret for vpn/alice: ")
        XCTAssertEqual(secret.title, "Keygate: new secret")
        XCTAssertEqual(secret.description, "Type the secret to store for vpn/alice.")
        XCTAssertEqual(PinentryPrompter.dialog(for: "Retype the secret: ").description, "Type the same secret again, to check it.")
        XCTAssertEqual(PinentryPrompter.dialog(for: "[keygate] the password Keygate last knew for al (your previous password): ").title,
                       "Keygate: previous password")
        let pam = PinentryPrompter.dialog(for: "[keygate] unlock the keychain\nPassword for alice: ")
        XCTAssertEqual([pam.title, pam.description, pam.prompt], ["Keygate", "unlock the keychain", "Password for alice:"])
    }

    func test_readSecret_isNil_whenThePersonCancels() throws {
        let program = try fakePinentry(getpin: "ERR 83886179 Operation cancelled <Pinentry>\\n")
        XCTAssertNil(try PinentryPrompter(program: program, environment: KeygateEnvironment(env)).readSecret(prompt: "[keygate] password for bob: "))
        XCTAssertTrue(received().contains("SETPROMPT Password for bob:"), "\(received())")
        XCTAssertTrue(received().contains("BYE"), "the session is closed after a cancel")
    }

    func test_readSecret_otherErrors_throwInteractionNotAllowed() throws {
        let program = try fakePinentry(getpin: "ERR 83886142 Inappropriate ioctl for device\\n")
        XCTAssertThrowsError(try PinentryPrompter(program: program, environment: KeygateEnvironment(env)).readSecret(prompt: "p")) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed)
        }
    }

    func test_readSecret_pinentryThatExitsAtOnce_throws_withoutKillingUs() throws {
        XCTAssertThrowsError(try PinentryPrompter(program: "/bin/true", environment: KeygateEnvironment(env)).readSecret(prompt: "p")) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed)
        }
    }

    func test_escape_percentEncodesPercentAndControlBytes_keepsUTF8() {
        XCTAssertEqual(PinentryPrompter.escape("50% off\r\nünïcode"), "50%25 off%0D%0Aünïcode")
    }

    func test_split_takesTheReasonAsDescription() {
        XCTAssertEqual(PinentryPrompter.split("[keygate] Deploy\nPassword for a: ").description, "Deploy")
        XCTAssertEqual(PinentryPrompter.split("[keygate] Deploy\nPassword for a: ").prompt, "Password for a:")
        XCTAssertNil(PinentryPrompter.split("[keygate] password for a: ").description)
    }

    func test_systemPrompter_choosesPinentry_forFlagAndEnvironment_butForcedAskpassWins() throws {
        XCTAssertEqual(try SystemPrompter(environment: [:], pinentry: true).choice(terminalAvailable: { true }), .pinentry("pinentry"))
        XCTAssertEqual(try SystemPrompter(environment: ["KEYGATE_PINENTRY": "/x/pe"]).choice(terminalAvailable: { true }), .pinentry("/x/pe"))
        XCTAssertEqual(try SystemPrompter(askpass: "/a", environment: ["KEYGATE_PINENTRY": "/x/pe"]).choice(terminalAvailable: { true }), .askpass("/a"))
        XCTAssertEqual(try SystemPrompter(environment: [:]).choice(terminalAvailable: { true }), .terminal)
    }

    func test_ensureAvailable_missingPinentry_isInteractionNotAllowed() {
        XCTAssertThrowsError(try PinentryPrompter(program: "no-such-pinentry", environment: KeygateEnvironment(env)).ensureAvailable()) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed)
        }
    }
}
