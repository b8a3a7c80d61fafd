// keygate-gatekeeper end to end, in its own process as every caller runs it: the built
// helper, real libpam (pam_matrix services with distinct passwords), root's records and
// per-item keys in a private folder. Each test names the promise of docs/GATEKEEPER.md it
// checks; the attacks run as another user are in GatekeeperAttackTests.
import Foundation
@testable import Keygate
@testable import KeygateGateWire
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

final class GatekeeperTests: XCTestCase {
    private var sandbox: GatekeeperSandbox?
    private let basic = "basic-\(UUID().uuidString.prefix(6))"
    private let strong = "strong-\(UUID().uuidString.prefix(6))"

    override func setUpWithError() throws {
        sandbox = try GatekeeperSandbox(
            services: ["keygate": basic, "keygate-strong": strong],
            policies: ["admin/10-gate.policy": """
                [service "prod*"]
                pam-service = keygate-strong

                [service "bank"]
                reuse-duration = 2

                """])
    }

    override func tearDownWithError() throws { sandbox?.tearDown() }

    private let presence = AccessControl.Constraint.userPresence

    /// Seals `secret` for `identity` to the gatekeeper's keys for these flags, with a throwaway class pair.
    private func seal(_ secret: String, _ identity: ItemIdentity, flags: UInt32 = AccessControl.userPresence.rawValue)
        throws -> SealedItem {
        let answer = try GateClient(prompter: ScriptedPrompter([]), environment: .process()).call(
            GateRequest(.keys(.init(identity, accessControl: flags), classKeys: []))).result
        guard case .keys(let publicKeys) = answer else { throw KeychainError.param("not a keys answer: \(answer)") }
        XCTAssertFalse(publicKeys.isEmpty, "the gatekeeper gave the item's gate keys")
        let classPair = try BoxKeyPair.generate()
        var bytes = Array(secret.utf8)
        let blob = try GatedBlob.seal(SecureBytes(consuming: &bytes), identity: identity, accessibility: .whenUnlocked,
                                      accessControl: flags, classKey: classPair.publicKey,
                                      gates: publicKeys.map { GateRecipient(kind: $0.kind, publicKey: $0.key) },
                                      combination: .all)
        return SealedItem(blob: blob, classPair: classPair, identity: identity)
    }

    /// A sealed secret, with the class pair that opens its class box and the item it was sealed for.
    private struct SealedItem {
        let blob: [UInt8]
        let classPair: BoxKeyPair
        let identity: ItemIdentity
    }

    /// Asks the gatekeeper to open `item`'s gate boxes, claiming the item it was sealed for.
    private func open(_ item: SealedItem, person: ScriptedPrompter, noPrompt: Bool = false) throws -> String {
        try open(item.blob, claiming: item.identity, classPair: item.classPair, person: person, noPrompt: noPrompt)
    }

    /// Reads `item` as `person`, expecting `secret`; by then `person` has been asked `prompts`
    /// times in all (`why` says what that count shows).
    private func assertReads(_ item: SealedItem, as person: ScriptedPrompter, _ secret: String, prompts: Int, _ why: String = "",
                             file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try open(item, person: person), secret, file: file, line: line)
        XCTAssertEqual(person.prompts.count, prompts, why, file: file, line: line)
    }

    /// Asks the gatekeeper to open the blob's gate boxes, claiming `identity`.
    private func open(_ blob: [UInt8], claiming identity: ItemIdentity, classPair: BoxKeyPair, person: ScriptedPrompter,
                      noPrompt: Bool = false) throws -> String {
        let header = try GatedBlob.header(of: blob)
        let boxes = header.gateSlots.enumerated().map { index, slot in
            GateRequest.Box(kind: slot.kind, keyID: slot.keyID, sealed: GatedBlob.gateBox(blob, header: header, index: index))
        }
        let reply = try GateClient(prompter: person, environment: .process()).call(
            GateRequest(.open(.init(identity, accessControl: header.accessControl), boxes: boxes, .init()), noPrompt: noPrompt))
        guard case .open(let answered, _, _) = reply.result else { throw KeychainError.param("not an open answer: \(reply.result)") }
        var shares = [SecureBytes?](repeating: nil, count: header.gateSlots.count)
        for share in answered where Int(share.index) < shares.count {
            var bytes = share.share
            shares[Int(share.index)] = try SecureBytes(consuming: &bytes)
        }
        let opened = try GatedBlob.open(blob, identity: identity, keys: [classPair], shares: shares)
        return opened.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    func test_aPresenceItemOpensAfterPAM_andTheWindowServesTheNextRead() throws {
        let item = ItemIdentity.generic(service: "web", account: "a")
        let sealed = try seal("hunter2", item)
        let person = ScriptedPrompter([basic])
        assertReads(sealed, as: person, "hunter2", prompts: 1, "the first read authenticated through PAM")
        assertReads(sealed, as: person, "hunter2", prompts: 1, "the second read, same scope and service, was inside the window")
    }

    func test_theGateKeyNeverReachesTheClient_onlyTheItemsShare() throws {
        let item = ItemIdentity.generic(service: "web", account: "a")
        let sealed = try seal("s", item)
        let header = try GatedBlob.header(of: sealed.blob)
        let box = GateRequest.Box(kind: .presence, keyID: header.gateSlots[0].keyID,
                                  sealed: GatedBlob.gateBox(sealed.blob, header: header, index: 0))
        let reply = try GateClient(prompter: ScriptedPrompter([basic]), environment: .process()).call(
            GateRequest(.open(.init(item, accessControl: header.accessControl), boxes: [box], .init())))
        guard case .open(let shares, let handle, _) = reply.result else { return XCTFail("not an open answer: \(reply.result)") }
        XCTAssertEqual(shares.count, 1)
        XCTAssertEqual(shares.first?.share.count, GatedBlob.contentKeyBytes, "a 32-byte share, no key pair")
        XCTAssertTrue(handle.isEmpty, "nothing else came back: an open answers shares and a handle, and none was asked")
    }

    func test_aBoxOfOneItemOpensNothingWhenTheClientClaimsAnother() throws {
        let prod = ItemIdentity.generic(service: "prod-db", account: "a")
        let sealed = try seal("p", prod)
        // The lie: prod's box, presented as an item whose policy asks only the basic service.
        let person = ScriptedPrompter([basic])
        XCTAssertThrowsError(try open(sealed.blob, claiming: .generic(service: "web", account: "a"),
                                      classPair: sealed.classPair, person: person)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .itemNotFound, "\(error)")
        }
        XCTAssertEqual(person.prompts.count, 0, "refused before any prompt: the key id does not match")
    }

    func test_aWeakerServiceNeverSatisfiesAStrongerOne() throws {
        let web = ItemIdentity.generic(service: "web", account: "a")
        let prod = ItemIdentity.generic(service: "prod-db", account: "a")
        let webItem = try seal("w", web)
        let prodItem = try seal("p", prod)
        let person = ScriptedPrompter([basic])
        XCTAssertEqual(try open(webItem, person: person), "w")
        // Inside the basic service's window, prod still asks, through its own stack.
        let strongPerson = ScriptedPrompter([basic, basic, basic])
        XCTAssertThrowsError(try open(prodItem, person: strongPerson)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .authFailed, "the basic password is wrong for keygate-strong: \(error)")
        }
        XCTAssertEqual(strongPerson.prompts.count, 3, "three tries through keygate-strong")
        let right = ScriptedPrompter([strong])
        assertReads(prodItem, as: right, "p", prompts: 1)
    }

    func test_eachItemsOwnWindowHolds() throws {
        let web = ItemIdentity.generic(service: "web", account: "a")
        let bank = ItemIdentity.generic(service: "bank", account: "a")
        let webItem = try seal("w", web)
        let bankItem = try seal("b", bank)
        let person = ScriptedPrompter([basic, basic])
        assertReads(bankItem, as: person, "b", prompts: 1)
        sleep(4)
        // The web item's window (the default) still holds for the same authentication...
        assertReads(webItem, as: person, "w", prompts: 1, "the default window still holds")
        // ...but bank's 2-second window has passed.
        assertReads(bankItem, as: person, "b", prompts: 2, "bank's own reuse-duration ended: asked again")
    }

    func test_noPromptFailsClosed_andAnotherProcessTreeDoesNotShareTheWindow() throws {
        let web = ItemIdentity.generic(service: "web", account: "a")
        let item = try seal("w", web)
        XCTAssertThrowsError(try open(item, person: ScriptedPrompter([]),
                                      noPrompt: true)) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .interactionNotAllowed, "\(error)")
        }
        XCTAssertEqual(try open(item, person: ScriptedPrompter([basic])), "w")
        XCTAssertEqual(try open(item, person: ScriptedPrompter([]),
                                noPrompt: true), "w", "the window holds for this process tree")
    }

    func test_theLockoutAndItsCounterAreRootsRecords() throws {
        let web = ItemIdentity.generic(service: "web", account: "a")
        let item = try seal("w", web)
        // The default lockout: 5 failures. Two calls of three wrong tries reach it.
        for _ in 0..<2 {
            XCTAssertThrowsError(try open(item.blob, claiming: web, classPair: item.classPair,
                                          person: ScriptedPrompter(["no", "no", "no"])))
        }
        let right = ScriptedPrompter([basic])
        XCTAssertThrowsError(try open(item, person: right)) { error in
            XCTAssertTrue((error as? KeychainError)?.message.contains("too many failed attempts") == true, "\(error)")
        }
        XCTAssertEqual(right.prompts.count, 0, "locked out: not even asked")
        let path = try XCTUnwrap(sandbox).recordsPath(uid: getuid())
        var info = stat()
        XCTAssertEqual(stat(path, &info), 0, "the records file exists at \(path)")
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(info.st_uid, geteuid(), "owned by the gatekeeper's effective user (root when installed)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("failures 0 "), "the lockout restarted the count: \(text)")
        XCTAssertFalse(text.contains(basic), "no password in the records")
    }

    func test_aClassKeyWithoutTheGatekeepersSealIsRefused() throws {
        let web = ItemIdentity.generic(service: "web", account: "a")
        let mine = try BoxKeyPair.generate()
        let forged = GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: mine.publicKey, seal: [UInt8](repeating: 7, count: 32))
        XCTAssertThrowsError(try GateClient(prompter: ScriptedPrompter([]), environment: .process()).call(
            GateRequest(.keys(.init(web, accessControl: AccessControl.userPresence.rawValue), classKeys: [forged])))) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .param)
            XCTAssertTrue((error as? KeychainError)?.message.contains("nothing was sealed") == true, "\(error)")
        }
        // Sealed by an authentication, the same key is accepted.
        let unsealed = GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: mine.publicKey, seal: [])
        let auth = try GateClient(prompter: ScriptedPrompter([basic]), environment: .process()).call(
            GateRequest(.authenticate(.init(classKeys: [unsealed]))))
        XCTAssertEqual(auth.password.map { $0.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }, basic,
                       "the client kept the password typed for the unlock")
        guard case .authenticate(let seals, _, _) = auth.result else { return XCTFail("not an authenticate answer: \(auth.result)") }
        let seal = try XCTUnwrap(seals.first?.seal)
        let accepted = GateRequest.ClassKey(accessibility: .whenUnlocked, publicKey: mine.publicKey, seal: seal)
        XCTAssertNoThrow(try GateClient(prompter: ScriptedPrompter([]), environment: .process()).call(
            GateRequest(.keys(.init(web, accessControl: AccessControl.userPresence.rawValue), classKeys: [accepted]))))
    }

    func test_malformedRequestsAreRefusedWithAClearError() throws {
        var request = GateRequest(.open(.init(.generic(service: "x", account: "y"), accessControl: 0), boxes: [], .init())).encoded()
        request.append(0)
        XCTAssertThrowsError(try GateRequest.decode(request))
        let helper = try XCTUnwrap(sandbox).helper
        let result = try Subprocess.run([helper], stdin: Data([0, 0, 0, 2, 0x51, 9]))
        let reply = try GateMessage.decode(Array(result.stdout.dropFirst(4)), answering: .status)
        guard case .result(.failure(let code, let message)) = reply else { return XCTFail("no failure: \(reply)") }
        XCTAssertEqual(code, .param)
        XCTAssertTrue(message.contains("malformed"), message)
    }
}
