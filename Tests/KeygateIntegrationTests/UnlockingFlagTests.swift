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

    private func call(_ request: GateRequest, _ person: ScriptedPrompter) throws -> GateAnswer {
        try GateClient(prompter: person, environment: .process()).call(request).result
    }

    func test_aPasswordTypedInTheRequest_sealsTheKeysItCarries_andArmsTheFinger_inThatOneRun() throws {
        let keys = try classKeys()
        let person = ScriptedPrompter([password])
        let answer = try call(GateRequest(.validate(.init(fresh: true, unlocking: keys))), person)
        guard case .validate(let settled) = answer else { return XCTFail("not a validate answer: \(answer)") }
        XCTAssertEqual(person.prompts.count, 1, "one password")
        XCTAssertEqual(settled.seals.map(\.accessibility), keys.map(\.accessibility), "every class key sent was sealed")
        XCTAssertEqual(settled.fingerUnlockKey.count, BoxKeyPair.publicKeyBytes, "the finger unlock was armed: its public key")
        // Root's audit record says what the run did besides validating.
        let audit = auditLines()
        XCTAssertTrue(audit.contains { $0.contains("op=validate") && $0.contains("also=certify,finger-unlock-arm") }, "\(audit)")
        // The seals are certify's: asked within the minute with no prompt, certify gives the same.
        guard case .certify(let certified) = try call(GateRequest(.certify(.init(classKeys: keys)), noPrompt: true), ScriptedPrompter([]))
        else { return XCTFail("not a certify answer") }
        XCTAssertEqual(certified.map(\.seal), settled.seals.map(\.seal))

        // Without the flag the same request seals and arms nothing.
        let plain = try call(GateRequest(.validate(.init(fresh: true))), ScriptedPrompter([password]))
        XCTAssertEqual(plain, .validate(settled: .nothing))
    }

    func test_aRequestAnsweredFromAWindow_getsNoSealAndNoArming_evenWithTheFlag() throws {
        let keys = try classKeys()
        _ = try call(GateRequest(.validate(.init(fresh: true))), ScriptedPrompter([password]))
        let person = ScriptedPrompter([])
        let windowed = try call(GateRequest(.validate(.init(unlocking: keys))), person)
        XCTAssertEqual(person.prompts.count, 0, "the window answered: no PAM in this request")
        XCTAssertEqual(windowed, .validate(settled: .nothing), "no password was taken in this request: nothing sealed, nothing armed")
    }

    /// An unlock (`authenticate`) with the flag: its own class keys are sealed only after the typed
    /// password, and the finger is armed in the same run, as `keygate unlock` on a locked keychain asks.
    func test_anUnlockWithTheFlag_sealsItsKeys_andArmsTheFinger() throws {
        let keys = try classKeys()
        let answer = try call(GateRequest(.authenticate(.init(reason: "unlock", classKeys: keys, unlocking: true))),
                              ScriptedPrompter([password]))
        guard case .authenticate(let seals, _, let fingerKey) = answer else { return XCTFail("not an authenticate answer: \(answer)") }
        XCTAssertEqual(seals.map(\.accessibility), keys.map(\.accessibility))
        XCTAssertEqual(fingerKey.count, BoxKeyPair.publicKeyBytes)
        XCTAssertTrue(auditLines().contains { $0.contains("op=unlock") && $0.contains("also=certify,finger-unlock-arm") })
    }

    func test_theFlag_onTheWire_andNeverForTheDaemon() throws {
        let request = GateRequest(.open(.init(.generic(service: "s", account: "a"), accessControl: 0), boxes: [],
                                        .init(unlocking: try classKeys())))
        XCTAssertEqual(try GateRequest.decode(request.encoded()), request)
        XCTAssertEqual(request.encoded()[3], 64, "flag 64, as the client before the typed wire sent it")
        XCTAssertFalse(request.daemonAnswers, "only the helper runs PAM, so only it is asked")
        var bytes = request.encoded()
        bytes[3] |= 128
        XCTAssertThrowsError(try GateRequest.decode(bytes), "an unknown flag is refused")
    }

    /// The lines of root's audit record (each uid's own file below the record's folder).
    private func auditLines() -> [Substring] {
        let folder = (sandbox?.gateDirectory ?? "") + "/log"
        let files = (FileManager.default.enumerator(atPath: folder)?.allObjects as? [String]) ?? []
        return files.flatMap { name in
            ((try? String(contentsOfFile: folder + "/" + name, encoding: .utf8)) ?? "").split(separator: "\n")
        }
    }
}
