// Every ItemStoreContract check on every store kind (StoreKind): one Swift Testing test a
// check, its cases the kinds. It replaces the one-line forwarders EmbeddedStoreTests,
// SecretServiceStoreTests and the three provider classes each kept per check (XCTest on
// Linux finds only a class's own methods). ItemStoreMatrixCoverageTests fails when a check
// of the contract is not here, or runs on fewer kinds than `StoreKind.allCases` without a
// stated reason. Serialized, as the XCTest classes ran: the provider sessions and the
// suite's gnome-keyring are shared, and two checks wait on the clock.
import Foundation
import KeygateTestSupport
import Testing
@testable import Keygate
@testable import KeygateCore
@testable import KeygateStorage

@Suite(.serialized, .stopsProviderSessions)
struct ItemStoreMatrixTests: OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.testsAStoreItself

    /// An internet item with every primary-key field set; the embedded store also keeps
    /// Apple's description, access group and synchronizable flag (the same items the
    /// XCTest classes wrote).
    static func internetAttributes(_ kind: StoreKind, tag: String) -> ItemAttributes {
        let identity = ItemIdentity.internet(server: tag + ".example", account: "bob", protocol: .https, port: 8443,
                                             path: "/login", securityDomain: "realm", authenticationType: .htmlForm)
        guard kind == .embedded else {
            return ItemAttributes(identity: identity, label: "bob at example", comment: nil, generic: [0x01],
                                  accessibility: .whenUnlockedThisDeviceOnly)
        }
        return ItemAttributes(identity: identity, label: "bob at example", comment: nil, generic: [0x01],
                              accessibility: .whenUnlockedThisDeviceOnly, description: "Web password", accessGroup: "group.a",
                              synchronizable: true)
    }

    // MARK: - round trips

    @Test(arguments: StoreKind.allCases)
    func search_roundTripsGenericItem_withBinaryBlobAndAllAttributes(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_roundTripsGenericItem_withBinaryBlobAndAllAttributes() }
    }

    /// Not on the provider matrix, whose classes never ran it: each check keeps the stores it ran on.
    @Test(arguments: [StoreKind.embedded, .secretService])
    func search_roundTrips(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_roundTrips(Self.internetAttributes(kind, tag: $0.tag)) }
    }

    @Test(arguments: StoreKind.allCases)
    func search_roundTripsInternetItem_withUnsetOptionalFields(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_roundTripsInternetItem_withUnsetOptionalFields() }
    }

    @Test(arguments: StoreKind.allCases)
    func search_roundTripsEmptyBlobAndEmptyGeneric(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_roundTripsEmptyBlobAndEmptyGeneric() }
    }

    @Test(arguments: StoreKind.allCases)
    func label_readsBackAsDisplayName_whenWrittenWithoutLabel(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.label_readsBackAsDisplayName_whenWrittenWithoutLabel() }
    }

    @Test(arguments: StoreKind.allCases)
    func search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches() }
    }

    @Test(arguments: StoreKind.allCases)
    func search_returnsNilBlobs_whenBlobsNotRequested(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_returnsNilBlobs_whenBlobsNotRequested() }
    }

    @Test(arguments: StoreKind.allCases)
    func search_matchesLabelClientSide_andLeavesNilFieldsOpen(_ kind: StoreKind) throws {
        try withStore(kind) { contract in
            try contract.search_matchesLabelClientSide_andLeavesNilFieldsOpen()
            if kind == .embedded {
                #expect(try contract.store.search(ItemQuery(), loadBlobs: false).count == 2, "the file holds only this test's items")
            }
        }
    }

    // MARK: - access control

    @Test(arguments: StoreKind.allCases)
    func search_roundTripsAccessControl_forEachCombination(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.search_roundTripsAccessControl_forEachCombination() }
    }

    @Test(arguments: StoreKind.allCases)
    func replace_dropsTheAccessControl_whenTheNewAttributesHaveNone(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.replace_dropsTheAccessControl_whenTheNewAttributesHaveNone() }
    }

    // MARK: - duplicates and replace

    @Test(arguments: StoreKind.allCases)
    func create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse() }
    }

    @Test(arguments: StoreKind.allCases)
    func create_withReplace_updatesInPlace_keepingCreationDate(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.create_withReplace_updatesInPlace_keepingCreationDate() }
    }

    @Test(arguments: StoreKind.allCases)
    func create_withReplace_sameAttributes_keepsCreated_andMovesModified(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.create_withReplace_sameAttributes_keepsCreated_andMovesModified() }
    }

    @Test(arguments: StoreKind.allCases)
    func create_withReplace_createsItem_whenNoneExists(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.create_withReplace_createsItem_whenNoneExists() }
    }

    /// Not on the provider matrix, whose classes never ran it: each check keeps the stores it ran on.
    @Test(arguments: [StoreKind.embedded, .secretService])
    func synchronizableTwins_areTwoItems_eachFoundByItsOwnKey(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.synchronizableTwins_areTwoItems_eachFoundByItsOwnKey() }
    }

    // MARK: - delete

    /// Not on the provider matrix: its classes never ran it. The embedded store also leaves no
    /// attribute row behind.
    @Test(arguments: [StoreKind.embedded, .secretService])
    func delete_returnsCount_andRemovesOnlyMatches(_ kind: StoreKind) throws {
        try withStore(kind) { contract in
            try contract.delete_returnsCount_andRemovesOnlyMatches(Self.internetAttributes(kind, tag: contract.tag))
            if let embedded = contract.store as? EmbeddedStore {
                let db = try SQLiteDatabase(path: embedded.path, create: false)
                #expect(try db.scalarText("SELECT count(*) FROM attributes WHERE item NOT IN (SELECT id FROM items)") == "0",
                        "no orphan attribute rows")
            }
        }
    }

    @Test(arguments: StoreKind.allCases)
    func delete_withLabel_deletesOnlyThatLabel(_ kind: StoreKind) throws {
        try withStore(kind) { try $0.delete_withLabel_deletesOnlyThatLabel() }
    }
}
