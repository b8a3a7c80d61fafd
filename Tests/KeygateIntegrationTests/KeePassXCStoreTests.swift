// The provider matrix on KeePassXC (2.7.4 on Debian 12) under Xvfb, its Secret Service
// integration on and the test database's root group exposed (scripts/provider-session).
// KeePassXC answers every CreateItem and Item.Delete with a prompt, even with its
// confirmations off: these tests prove Keygate completes them (issue 21).
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class KeePassXCStoreTests: XCTestCase {
    private static let fixture = ProviderFixture(.keePassXC)
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
        let session = try ProviderSession(.keePassXC)
        defer { session.stop() }
        try body(ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))"))
    }

    // MARK: - who answers, and prompts

    func test_provider_isNamed() throws {
        try shared().provider_isNamed(.keePassXC)
    }

    func test_createAndDelete_roundTrip() throws {
        try shared().createAndDelete_roundTrip()
    }

    /// Measured: KeePassXC answers Prompt.Dismiss but leaves its unlock window on screen.
    func test_unlockPrompt_waitsForTheWindow_thenFailsSayingSo() throws {
        try own { try $0.unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: true) }
    }

    func test_unlockPrompt_dismissed_isUserCanceled() throws {
        try own { try $0.unlockPrompt_dismissed_isUserCanceled() }
    }

    /// KeePassXC's default "Unlock before search" holds a search of a locked database until its
    /// unlock dialog is answered. With the unlock prompt allowed, the held search becomes
    /// Keygate's own unlock prompt, whose window is announced and waited for; with it off, the
    /// locked database is found before any search is sent (issue 35: it used to time out after
    /// the deadline, with KeePassXC's unlock window opened anyway), and reported at once.
    func test_unlockBeforeSearch_aHeldSearch_becomesTheUnlockPrompt_orSaysWhy() throws {
        let session = try ProviderSession(.keePassXC, settings: ["PROVIDER_SESSION_UNLOCK_BEFORE_SEARCH": "true"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))")
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "held"), label: "held")
        try matrix.store().create(attributes, blob: [1], replace: false)
        try matrix.store().lockDefaultCollection()

        var started = ContinuousClock.now
        XCTAssertThrowsError(try matrix.store(deadline: .seconds(1), unlockPrompt: .never)
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)) { error in
            let error = error as? KeychainError
            XCTAssertEqual(error?.code, .interactionNotAllowed, error?.message ?? "")
            XCTAssertTrue(error?.message.hasPrefix("the default keyring collection is locked (KeePassXC): unlock the database") ?? false,
                          error?.message ?? "")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(900), "found before the search's 1 s deadline")
        started = ContinuousClock.now
        XCTAssertThrowsError(try matrix.store(deadline: .seconds(1), unlockPrompt: .auto, windowLimit: .seconds(3))
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)) { error in
            let error = error as? KeychainError
            XCTAssertEqual(error?.code, .interactionNotAllowed, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("a KeePassXC window waited 3 s for an answer to unlock the default collection") ?? false,
                          error?.message ?? "")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }

    func test_unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow() throws {
        try own { try $0.unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow(named: "Unlock") }
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
        try own { try $0.operations_failLocked_withProviderAdvice("unlock the database in KeePassXC") }
    }

    func test_operations_failNotAvailable_whenDaemonKilled() throws {
        try own { try $0.operations_failNotAvailable_whenDaemonKilled() }
    }

    func test_operations_failWithinDeadline_whenDaemonHung() throws {
        try own { try $0.operations_failWithinDeadline_whenDaemonHung(naming: "KeePassXC") }
    }
}
