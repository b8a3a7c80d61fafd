// The `unlocking` request flag (docs/GATEKEEPER.md, "The operations"): the built
// keygate-gatekeeper, real libpam (pam_matrix), root's records in a private folder, and a print
// file in a private fprintd folder so that the finger unlock can be armed. A request whose own PAM
// conversation takes the password gets the class keys it carries sealed and the finger unlock's
// key in the same run; a request answered from a window, a handle or a finger gets neither.
import Foundation
@testable import Keygate
@testable import KeygateGateWire
@testable import KeygateAuthentication
@testable import KeygateCore
import KeygateTestSupport
import XCTest

final class UnlockingFlagTests: XCTestCase {
    private var sandbox: GatekeeperSandbox?
    private var prints = ""
    private let password = "pw-\(UUID().uuidString.prefix(8))"

    override func setUpWithError() throws {
        sandbox = try GatekeeperSandbox(services: ["keygate": password])
        // One enrolled print for the test's user (driver/device/finger), as fprintd keeps them.
        prints = NSTemporaryDirectory() + "kg-prints-\(UUID().uuidString.prefix(8))"
        let user = sandbox?.user ?? "root"
        try FileManager.default.createDirectory(atPath: prints + "/\(user)/virtual_image/0", withIntermediateDirectories: true)
        try Data("a print".utf8).write(to: URL(fileURLWithPath: prints + "/\(user)/virtual_image/0/7"))
        setenv("KEYGATE_TEST_FPRINT_DIR", prints, 1)
    }

    override func tearDownWithError() throws {
        unsetenv("KEYGATE_TEST_FPRINT_DIR")
        try? FileManager.default.removeItem(atPath: prints)
        sandbox?.tearDown()
    }

    /// A public key for every class, as keys.json records them.
    private func classKeys() throws -> [GateRequest.ClassKey] {
        try Accessibility.allCases.map {
            GateRequest.ClassKey(accessibility: $0, publicKey: try BoxKeyPair.generate().publicKey, seal: [])
        }
    }

    private func call(_ request: GateRequest, _ person: ScriptedPrompter) throws -> GateResult {
        try GateClient(prompter: person, environment: .process()).call(request).result
    }

    func test_aPasswordTypedInTheRequest_sealsTheKeysItCarries_andArmsTheFinger_inThatOneRun() throws {
        let keys = try classKeys()
        let person = ScriptedPrompter([password])
        let result = try call(GateRequest(operation: .validate, flags: [.fresh, .unlocking], classKeys: keys), person)
        XCTAssertEqual(person.prompts.count, 1, "one password")
        XCTAssertEqual(result.seals.map(\.accessibility), keys.map(\.accessibility), "every class key sent was sealed")
        XCTAssertEqual(result.seed.count, BoxKeyPair.publicKeyBytes, "the finger unlock was armed: its public key")
        // Root's audit record says what the run did besides validating.
        let audit = (try? String(contentsOfFile: (sandbox?.gateDirectory ?? "") + "/log/gatekeeper.log", encoding: .utf8)) ?? ""
        XCTAssertTrue(audit.split(separator: "\n").contains { $0.contains("op=validate") && $0.contains("also=certify,finger-unlock-arm") },
                      audit)
        // The seals are certify's: asked within the minute with no prompt, certify gives the same.
        let certified = try call(GateRequest(operation: .certify, flags: .noPrompt, classKeys: keys), ScriptedPrompter([]))
        XCTAssertEqual(certified.seals.map(\.seal), result.seals.map(\.seal))

        // Without the flag the same request seals and arms nothing.
        let plain = try call(GateRequest(operation: .validate, flags: .fresh, classKeys: keys), ScriptedPrompter([password]))
        XCTAssertTrue(plain.seals.isEmpty)
        XCTAssertTrue(plain.seed.isEmpty)
    }

    func test_aRequestAnsweredFromAWindow_getsNoSealAndNoArming_evenWithTheFlag() throws {
        let keys = try classKeys()
        _ = try call(GateRequest(operation: .validate, flags: .fresh), ScriptedPrompter([password]))
        let person = ScriptedPrompter([])
        let windowed = try call(GateRequest(operation: .validate, flags: .unlocking, classKeys: keys), person)
        XCTAssertEqual(person.prompts.count, 0, "the window answered: no PAM in this request")
        XCTAssertTrue(windowed.seals.isEmpty, "no password was taken in this request: nothing sealed")
        XCTAssertTrue(windowed.seed.isEmpty, "nor armed")
    }

    func test_theFlag_onTheWire_andNeverForTheDaemon() throws {
        let request = GateRequest(operation: .open, flags: [.unlocking], identity: .generic(service: "s", account: "a"),
                                  classKeys: try classKeys())
        XCTAssertEqual(try GateRequest.decode(request.encoded()), request)
        XCTAssertFalse(request.daemonAnswers, "only the helper runs PAM, so only it is asked")
        var bytes = request.encoded()
        bytes[3] |= 128
        XCTAssertThrowsError(try GateRequest.decode(bytes), "an unknown flag is refused")
    }
}
