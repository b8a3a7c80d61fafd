// PAMAuthenticator against the REAL libpam: service files in a temporary folder
// (pam_start_confdir) with pam_wrapper's pam_matrix.so, and one test with the real
// pam_unix and a throwaway system user. Only the person at the prompt is scripted.
import Foundation
import XCTest
@testable import KeygateAuthentication
@testable import KeygateCore
import KeygateTestSupport

final class PAMAuthenticatorTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.notAStoreFlow
    private var folder = ""
    private let service = "keygatetest"

    override func setUpWithError() throws {
        try Requirement.require(Self.pamMatrix != nil, "pam_wrapper's pam_matrix.so (apt install libpam-wrapper)")
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("kg-pam-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let passdb = folder + "/passdb"
        try """
        alice:secret:keygatetest
        carol:p ä ss wörd 🔑:keygatetest
        dave:pw:someotherservice

        """.write(toFile: passdb, atomically: true, encoding: .utf8)
        let module = Self.pamMatrix ?? ""
        try """
        auth     required \(module) passdb=\(passdb)
        account  required \(module) passdb=\(passdb)

        """.write(toFile: folder + "/" + service, atomically: true, encoding: .utf8)
        try """
        auth     optional pam_echo.so Keygate test notice
        auth     required \(module) passdb=\(passdb)
        account  required pam_permit.so

        """.write(toFile: folder + "/keygatetest-echo", atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        if !folder.isEmpty { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// /usr/lib/<multiarch>/pam_wrapper/pam_matrix.so
    static var pamMatrix: String? {
        let lib = "/usr/lib"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: lib)) ?? []
        return entries.sorted().map { "\(lib)/\($0)/pam_wrapper/pam_matrix.so" }
            .first { FileManager.default.fileExists(atPath: $0) }
    }

    private func authenticator(user: String, service: String? = nil) -> PAMAuthenticator {
        PAMAuthenticator(service: service ?? self.service, user: user, confdir: folder)
    }

    private func string(_ secret: SecureBytes) -> String {
        String(decoding: secret.unprotectedCopy(), as: UTF8.self)
    }

    private func keychainError(_ body: () throws -> Any) -> KeychainError? {
        do {
            _ = try body()
            return nil
        } catch let error as KeychainError {
            return error
        } catch {
            XCTFail("unexpected error type: \(error)")
            return nil
        }
    }

    func test_authenticate_returnsTypedPassword_afterOnePrompt_whenPasswordRight() throws {
        let person = ScriptedPrompter(["secret"])
        let password = try authenticator(user: "alice").authenticate(prompter: person, reason: nil, maxTries: 3)
        XCTAssertEqual(string(password), "secret")
        XCTAssertEqual(person.prompts, ["[keygate] password for alice: "])
        XCTAssertEqual(person.notices, [])
    }

    func test_authenticate_returnsExactBytes_forPasswordWithSpacesAndNonASCII() throws {
        let person = ScriptedPrompter(["p ä ss wörd 🔑"])
        let password = try authenticator(user: "carol").authenticate(prompter: person, reason: nil, maxTries: 3)
        XCTAssertEqual(password.unprotectedCopy(), Array("p ä ss wörd 🔑".utf8))
    }

    func test_authenticate_showsReasonInPrompt() throws {
        let person = ScriptedPrompter(["secret"])
        _ = try authenticator(user: "alice").authenticate(prompter: person, reason: "Unlock the VPN password", maxTries: 3)
        XCTAssertEqual(person.prompts, ["[keygate] Unlock the VPN password\nPassword for alice: "])
    }

    func test_authenticate_succeedsOnSecondTry_afterOneSorryNotice() throws {
        let person = ScriptedPrompter(["wrong", "secret"])
        let password = try authenticator(user: "alice").authenticate(prompter: person, reason: nil, maxTries: 3)
        XCTAssertEqual(string(password), "secret")
        XCTAssertEqual(person.prompts.count, 2)
        XCTAssertEqual(person.notices, ["Sorry, try again."])
    }

    func test_authenticate_failsAfterExactlyThreePrompts_whenAllWrong() throws {
        let person = ScriptedPrompter(["wrong1", "wrong2", "wrong3", "secret"])
        let error = keychainError { try authenticator(user: "alice").authenticate(prompter: person, reason: nil, maxTries: 3) }
        XCTAssertEqual(error?.code, .authFailed)
        XCTAssertEqual(error?.message, "3 incorrect password attempts for alice")
        XCTAssertEqual(person.prompts.count, 3)
        XCTAssertEqual(person.notices, ["Sorry, try again.", "Sorry, try again."])
    }

    func test_authenticate_throwsUserCanceled_whenPersonCancels() throws {
        let person = ScriptedPrompter([nil, "secret"])
        let error = keychainError { try authenticator(user: "alice").authenticate(prompter: person, reason: nil, maxTries: 3) }
        XCTAssertEqual(error?.code, .userCanceled)
        XCTAssertEqual(person.prompts.count, 1)
    }

    func test_authenticate_fails_forUnknownUser() throws {
        let person = ScriptedPrompter(["secret", "secret", "secret"])
        let error = keychainError { try authenticator(user: "nobody-here").authenticate(prompter: person, reason: nil, maxTries: 3) }
        XCTAssertNotNil(error)
        // pam_matrix, like pam_unix, does not reveal whether the user exists.
        XCTAssertEqual(error?.code, .authFailed)
    }

    func test_authenticate_failsWithReason_whenAccountCheckRefuses() throws {
        // pam_matrix lets dave in only through "someotherservice": auth passes, account fails.
        let person = ScriptedPrompter(["pw"])
        let error = keychainError { try authenticator(user: "dave").authenticate(prompter: person, reason: nil, maxTries: 3) }
        XCTAssertEqual(error?.code, .authFailed)
        XCTAssertTrue(error?.message.contains("does not let dave in") ?? false, "\(String(describing: error))")
    }

    func test_authenticate_namesService_whenServiceNotInstalled() throws {
        let person = ScriptedPrompter(["secret"])
        let error = keychainError {
            try authenticator(user: "alice", service: "no-such-keygate-service").authenticate(prompter: person, reason: nil, maxTries: 3)
        }
        XCTAssertEqual(error?.code, .notAvailable)
        XCTAssertTrue(error?.message.contains("'no-such-keygate-service'") ?? false, "\(String(describing: error))")
        XCTAssertEqual(person.prompts.count, 0)
    }

    func test_authenticate_throwsInteractionNotAllowed_beforeAnyPAMCall_whenNoPrompt() throws {
        // The service does not exist either: the prompter check must come first.
        let person = ScriptedPrompter(["secret"], available: false)
        let error = keychainError {
            try authenticator(user: "alice", service: "no-such-keygate-service").authenticate(prompter: person, reason: nil, maxTries: 3)
        }
        XCTAssertEqual(error?.code, .interactionNotAllowed)
        XCTAssertEqual(person.prompts.count, 0)
    }

    func test_authenticate_passesPAMTextInfoToNotify() throws {
        // pam_echo sends its arguments as PAM_TEXT_INFO before pam_matrix asks.
        let person = ScriptedPrompter(["wrong", "secret"])
        _ = try authenticator(user: "alice", service: "keygatetest-echo").authenticate(prompter: person, reason: nil, maxTries: 3)
        XCTAssertEqual(person.notices, ["Keygate test notice", "Sorry, try again.", "Keygate test notice"])
        XCTAssertEqual(person.prompts.count, 2)
    }

    // MARK: real pam_unix

    func test_pamUnix_acceptsRightPassword_andRejectsWrong_forThrowawayUser() throws {
        try Requirement.require(Requirement.isRoot, "root, to create a throwaway user")
        let user = "kgt" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(12)
        let password = "pw " + UUID().uuidString + " ä"
        let add = try Subprocess.run(["useradd", "-m", "-s", "/usr/sbin/nologin", user])
        XCTAssertEqual(add.status, 0, add.err)
        defer { _ = try? Subprocess.run(["userdel", "-r", user]) }
        let set = try Subprocess.run(["chpasswd"], stdin: Data("\(user):\(password)\n".utf8))
        XCTAssertEqual(set.status, 0, set.err)
        try "auth required pam_unix.so\naccount required pam_unix.so\n"
            .write(toFile: folder + "/keygate-unix", atomically: true, encoding: .utf8)
        let pam = PAMAuthenticator(service: "keygate-unix", user: user, confdir: folder)

        let right = ScriptedPrompter([password])
        let typed = try pam.authenticate(prompter: right, reason: nil, maxTries: 1)
        XCTAssertEqual(string(typed), password)
        XCTAssertEqual(right.prompts, ["[keygate] password for \(user): "])

        let wrong = ScriptedPrompter(["not the password"])
        let error = keychainError { try pam.authenticate(prompter: wrong, reason: nil, maxTries: 1) }
        XCTAssertEqual(error?.code, .authFailed)
        XCTAssertEqual(error?.message, "1 incorrect password attempt for \(user)")
    }
}
