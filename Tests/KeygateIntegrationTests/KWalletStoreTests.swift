// The provider matrix on kwalletd5 (KDE Frameworks 5.103 on Debian 12, its Secret Service API
// on) under Xvfb, its wallet opened by the login key as pam_kwallet5 does, then unlocked for
// Secret Service clients through Unlock and its prompt (scripts/provider-session).
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class KWalletStoreTests: XCTestCase {
    private static let fixture = ProviderFixture(.kWallet)
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
        let session = try ProviderSession(.kWallet)
        defer { session.stop() }
        try body(ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))"))
    }

    // MARK: - who answers, and prompts

    func test_provider_isNamed() throws {
        try shared().provider_isNamed(.kWallet)
    }

    func test_createAndDelete_roundTrip() throws {
        try shared().createAndDelete_roundTrip()
    }

    /// Measured: kwalletd5 answers Prompt.Dismiss but leaves its unlock window on screen.
    func test_unlockPrompt_waitsForTheWindow_thenFailsSayingSo() throws {
        try own { try $0.unlockPrompt_waitsForTheWindow_thenFailsSayingSo(windowStays: true) }
    }

    func test_unlockPrompt_unlocksThroughTheProvidersPrompt_whenTheWalletWasOpenedByTheLoginKey() throws {
        try own { matrix in try matrix.unlockPrompt_unlocksThroughTheProvidersPrompt { try matrix.session.pamOpenWallet() } }
    }

    func test_unlockPrompt_dismissed_isUserCanceled() throws {
        try own { try $0.unlockPrompt_dismissed_isUserCanceled() }
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
        try own { try $0.operations_failLocked_withProviderAdvice("open the wallet") }
    }

    func test_operations_failNotAvailable_whenDaemonKilled() throws {
        try own { try $0.operations_failNotAvailable_whenDaemonKilled() }
    }

    func test_operations_failWithinDeadline_whenDaemonHung() throws {
        try own { try $0.operations_failWithinDeadline_whenDaemonHung(naming: "kwalletd") }
    }
}
