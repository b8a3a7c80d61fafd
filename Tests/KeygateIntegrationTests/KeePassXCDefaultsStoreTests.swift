// The provider matrix on KeePassXC as Debian installs it (scripts/provider-session with
// PROVIDER_SESSION_DEFAULTS=1: the Secret Service integration on, nothing else set), so
// "Confirm when passwords are retrieved by clients" (ConfirmAccessItem), "Confirm when
// passwords are deleted by clients" (ConfirmDeleteItem) and "Unlock before search" are on. A
// person at its display (WindowAnswerer: xdotool on Xvfb) answers its Access Request and
// delete windows as they come, and Keygate may show them (the unlock prompt on). The same
// checks run on the tuned settings in KeePassXCStoreTests, which people use too.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class KeePassXCDefaultsStoreTests: XCTestCase {
    private static let fixture = ProviderFixture(.keePassXC, settings: ["PROVIDER_SESSION_DEFAULTS": "1"], answers: [
        WindowAnswerer.Answer(name: "Access Request", keys: ["Return"]),
        // Its delete confirmation's default button is Cancel: the person moves to the other first.
        WindowAnswerer.Answer(name: "recycle bin|Delete entr", keys: ["shift+Tab", "Return"]),
    ])
    private var matrix: ProviderMatrix?

    override class func tearDown() {
        fixture.stop()
        super.tearDown()
    }

    override func setUpWithError() throws {
        matrix = ProviderMatrix(session: try Self.fixture.shared(), tag: "kg-matrix-\(UUID().uuidString.prefix(8))",
                                unlockPrompt: .auto)
    }

    override func tearDown() {
        matrix?.cleanUp()
        super.tearDown()
    }

    private func shared() throws -> ProviderMatrix { try XCTUnwrap(matrix) }

    func test_provider_isNamed() throws {
        try shared().provider_isNamed(.keePassXC)
    }

    func test_createAndDelete_roundTrip() throws {
        try shared().createAndDelete_roundTrip()
    }

    /// An item another program wrote: this store's connection is a new client, locked out of
    /// it until the Access Request window is answered.
    func test_search_readsAnItemAnotherClientWrote_throughTheAccessRequestWindow() throws {
        let matrix = try shared()
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "other"), label: "other")
        try matrix.store().create(attributes, blob: [3, 5], replace: false)
        let before = Self.fixture.answered.filter { $0.contains("Access Request") }.count

        XCTAssertEqual(try matrix.store().search(ItemQuery(exactly: attributes.identity), loadBlobs: true).map(\.blob), [[3, 5]])
        XCTAssertEqual(Self.fixture.answered.filter { $0.contains("Access Request") }.count, before + 1, "\(Self.fixture.answered)")
    }

    // MARK: - ItemStoreContract

    /// Every check the other providers' classes run one by one, here in one test (each with
    /// its own items, removed after it): the check that failed is named in the failure.
    func test_everyItemStoreContractCheck() throws {
        let checks: [(String, (ItemStoreContract) throws -> Void)] = [
            ("generic round trip", { try $0.search_roundTripsGenericItem_withBinaryBlobAndAllAttributes() }),
            ("internet round trip", { try $0.search_roundTripsInternetItem_withUnsetOptionalFields() }),
            ("empty blob", { try $0.search_roundTripsEmptyBlobAndEmptyGeneric() }),
            ("label default", { try $0.label_readsBackAsDisplayName_whenWrittenWithoutLabel() }),
            ("attributes detail", { try $0.search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches() }),
            ("no blobs", { try $0.search_returnsNilBlobs_whenBlobsNotRequested() }),
            ("label match", { try $0.search_matchesLabelClientSide_andLeavesNilFieldsOpen() }),
            ("access control", { try $0.search_roundTripsAccessControl_forEachCombination() }),
            ("replace drops access control", { try $0.replace_dropsTheAccessControl_whenTheNewAttributesHaveNone() }),
            ("duplicate", { try $0.create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse() }),
            ("replace in place", { try $0.create_withReplace_updatesInPlace_keepingCreationDate() }),
            ("replace same attributes", { try $0.create_withReplace_sameAttributes_keepsCreated_andMovesModified() }),
            ("replace creates", { try $0.create_withReplace_createsItem_whenNoneExists() }),
            ("delete by label", { try $0.delete_withLabel_deletesOnlyThatLabel() }),
        ]
        let session = try Self.fixture.shared()
        for (name, check) in checks {
            let matrix = ProviderMatrix(session: session, tag: "kg-matrix-\(UUID().uuidString.prefix(8))", unlockPrompt: .auto)
            defer { matrix.cleanUp() }
            XCTAssertNoThrow(try check(matrix.contract), name)
        }
    }
}
