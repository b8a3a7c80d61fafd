// The provider matrix on gnome-keyring (42.1 on Debian 12), alone on a private bus with D-Bus
// auto-start off (scripts/provider-session). SecretServiceStoreTests covers gnome-keyring more
// deeply on the suite's own bus; this class runs the same matrix as the other providers.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class GnomeKeyringProviderTests: XCTestCase {
    private static let fixture = ProviderFixture(.gnomeKeyring)
    private var matrix: ProviderMatrix?

    override class func tearDown() {
        fixture.stop()
        super.tearDown()
    }

    override func setUpWithError() throws {
        matrix = ProviderMatrix(session: try Self.fixture.shared(), tag: "kg-matrix-\(UUID().uuidString.prefix(8))")
    }

    override func tearDown() {
        matrix?.cleanUp()
        super.tearDown()
    }

    private func shared() throws -> ProviderMatrix { try XCTUnwrap(matrix) }

    /// A session of its own, for a check that locks, kills or stops the daemon.
    private func own(_ body: (ProviderMatrix) throws -> Void) throws {
        let session = try ProviderSession(.gnomeKeyring)
        defer { session.stop() }
        try body(ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))"))
    }

    // MARK: - who answers, and prompts

    func test_provider_isNamed() throws {
        try shared().provider_isNamed(.gnomeKeyring)
    }

    func test_createAndDelete_roundTrip() throws {
        try shared().createAndDelete_roundTrip()
    }

    /// A display but no prompter (gcr-prompter neither running nor activatable on this bus):
    /// gnome-keyring would dismiss the unlock prompt at once, so Keygate does not ask, and the
    /// locked collection stays exit 36 with gnome-keyring's advice, never a false "canceled".
    func test_unlockPrompt_withADisplayButNoPrompter_isNotAsked_andStaysLocked() throws {
        try own { matrix in
            let store = matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(4))
            let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "u"), label: "u")
            try store.create(attributes, blob: [1], replace: false)
            try store.lockDefaultCollection()
            setenv("DISPLAY", ":4242", 1)
            defer { unsetenv("DISPLAY") }

            do {
                _ = try store.search(ItemQuery(exactly: attributes.identity), loadBlobs: true)
                XCTFail("a locked collection was read with no prompter")
            } catch let error as KeychainError {
                XCTAssertEqual(error.code, .interactionNotAllowed, error.message)
                XCTAssertTrue(error.message.contains("restart gnome-keyring-daemon with --unlock"), error.message)
            }
        }
    }

    /// With a display and gnome-keyring's prompter (gcr-prompter) on it, a read of a locked
    /// collection asks gnome-keyring to unlock it, as libsecret does; the password typed into
    /// the "Unlock Login Keyring" window (xdotool) opens it, and the read goes on.
    func test_unlockPrompt_throughGcrPrompter_unlocksWithThePasswordTypedIntoItsWindow() throws {
        try Self.requirePrompterAndXdotool()
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))")
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "typed"), label: "typed")
        try matrix.store().create(attributes, blob: [7, 7], replace: false)
        try matrix.store().lockDefaultCollection()
        XCTAssertTrue(try matrix.store().status().locked)

        let env = session.environment(display: true)
        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        let typist = Thread {
            for _ in 0..<100 {
                usleep(200_000)
                let found = try? Subprocess.run(["xdotool", "search", "--onlyvisible", "--name", "Unlock"], environment: env,
                                                timeout: 10)
                guard let window = found?.out.split(separator: "\n").first.map(String.init), !window.isEmpty else { continue }
                _ = try? Subprocess.run(["xdotool", "windowfocus", "--sync", window], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "type", "--delay", "20", "kg-test"], environment: env, timeout: 10)
                _ = try? Subprocess.run(["xdotool", "key", "Return"], environment: env, timeout: 10)
                return
            }
        }
        typist.start()
        setenv("DISPLAY", session.display, 1)
        defer { unsetenv("DISPLAY") }

        let found = try matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(30))
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)

        XCTAssertEqual(found.map(\.blob), [[7, 7]])
        XCTAssertFalse(try matrix.store().status().locked)
    }

    /// gcr-prompter's unlock window left unanswered: Keygate waits the window limit, then
    /// dismisses the prompt (Prompt.Dismiss). Measured: gnome-keyring takes the window down.
    func test_unlockPrompt_waitsForGcrPromptersWindow_andDismissTakesItDown() throws {
        try Self.requirePrompterAndXdotool()
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1"])
        defer { session.stop() }
        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        setenv("DISPLAY", session.display, 1)
        defer { unsetenv("DISPLAY") }

        try ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))")
            .unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: false)
    }

    /// gnome-keyring with no keyring at all (a first login that handed it no password): a write,
    /// with a display and gcr-prompter, creates the default collection through CreateCollection
    /// with the "default" alias; the new password typed twice into gcr-prompter's window
    /// (xdotool) makes it, and the write goes on. With the prompt off, the write fails saying what
    /// to do and nothing is created.
    func test_firstLogin_aWriteCreatesTheDefaultCollection_throughGcrPromptersNewKeyringWindow() throws {
        try Self.requirePrompterAndXdotool()
        let session = try ProviderSession(.gnomeKeyring, settings: ["PROVIDER_SESSION_DISPLAY": "1", "PROVIDER_SESSION_FIRST_LOGIN": "1"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))")
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "first"), label: "first")
        XCTAssertThrowsError(try matrix.store(unlockPrompt: .never).create(attributes, blob: [5], replace: false)) { error in
            XCTAssertTrue((error as? KeychainError)?.message.contains("gnome-keyring has no default collection") ?? false, "\(error)")
        }

        let prompter = try session.startGcrPrompter()
        defer { prompter.terminate(); prompter.waitUntilExit() }
        let person = try WindowAnswerer(display: session.display, [
            WindowAnswerer.Answer(name: "gcr-prompter", byClass: true, type: "kg-test",
                                  keys: ["Tab", "k", "g", "minus", "t", "e", "s", "t", "Return"]),
        ])
        defer { person.stop() }
        setenv("DISPLAY", session.display, 1)
        defer { unsetenv("DISPLAY") }

        try matrix.store(deadline: .seconds(2), unlockPrompt: .auto, windowLimit: .seconds(30)).create(attributes, blob: [5],
                                                                                                       replace: false)

        XCTAssertEqual(try matrix.store().search(ItemQuery(exactly: attributes.identity), loadBlobs: true).map(\.blob), [[5]],
                       "\(person.answered)")
        let alias = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.ReadAlias", ["default"])
        XCTAssertFalse(alias.out.contains("'/'"), alias.out)
    }

    // MARK: - gnome-keyring's prompter

    /// Skips (fails under CI) without gcr-prompter or xdotool.
    private static func requirePrompterAndXdotool() throws {
        for (path, package) in [("/usr/libexec/gcr-prompter", "gcr"), ("/usr/bin/xdotool", "xdotool")] {
            try Requirement.require(FileManager.default.isExecutableFile(atPath: path), "\(path) (apt-get install \(package))")
        }
    }

    // MARK: - ItemStoreContract

    func test_search_roundTripsGenericItem_withBinaryBlobAndAllAttributes() throws {
        try shared().contract.search_roundTripsGenericItem_withBinaryBlobAndAllAttributes()
    }

    func test_search_roundTripsInternetItem_withUnsetOptionalFields() throws {
        try shared().contract.search_roundTripsInternetItem_withUnsetOptionalFields()
    }

    func test_search_roundTripsEmptyBlobAndEmptyGeneric() throws {
        try shared().contract.search_roundTripsEmptyBlobAndEmptyGeneric()
    }

    func test_label_readsBackAsDisplayName_whenWrittenWithoutLabel() throws {
        try shared().contract.label_readsBackAsDisplayName_whenWrittenWithoutLabel()
    }

    func test_search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches() throws {
        try shared().contract.search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches()
    }

    func test_search_returnsNilBlobs_whenBlobsNotRequested() throws {
        try shared().contract.search_returnsNilBlobs_whenBlobsNotRequested()
    }

    func test_search_matchesLabelClientSide_andLeavesNilFieldsOpen() throws {
        try shared().contract.search_matchesLabelClientSide_andLeavesNilFieldsOpen()
    }

    func test_search_roundTripsAccessControl_forEachCombination() throws {
        try shared().contract.search_roundTripsAccessControl_forEachCombination()
    }

    func test_replace_dropsTheAccessControl_whenTheNewAttributesHaveNone() throws {
        try shared().contract.replace_dropsTheAccessControl_whenTheNewAttributesHaveNone()
    }

    func test_create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse() throws {
        try shared().contract.create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse()
    }

    func test_create_withReplace_updatesInPlace_keepingCreationDate() throws {
        try shared().contract.create_withReplace_updatesInPlace_keepingCreationDate()
    }

    func test_create_withReplace_sameAttributes_keepsCreated_andMovesModified() throws {
        try shared().contract.create_withReplace_sameAttributes_keepsCreated_andMovesModified()
    }

    func test_create_withReplace_createsItem_whenNoneExists() throws {
        try shared().contract.create_withReplace_createsItem_whenNoneExists()
    }

    func test_delete_withLabel_deletesOnlyThatLabel() throws {
        try shared().contract.delete_withLabel_deletesOnlyThatLabel()
    }

    // MARK: - locked, killed, hung

    func test_operations_failLocked_withProviderAdvice() throws {
        try own { try $0.operations_failLocked_withProviderAdvice("restart gnome-keyring-daemon with --unlock") }
    }

    func test_operations_failNotAvailable_whenDaemonKilled() throws {
        try own { try $0.operations_failNotAvailable_whenDaemonKilled() }
    }

    func test_operations_failWithinDeadline_whenDaemonHung() throws {
        try own { try $0.operations_failWithinDeadline_whenDaemonHung(naming: "gnome-keyring-daemon") }
    }
}
