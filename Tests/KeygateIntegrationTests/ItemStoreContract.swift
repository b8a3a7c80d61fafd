// The behaviour every ItemStore must have, proved on every store kind: ItemStoreMatrixTests
// runs each check here as one Swift Testing test, parameterised over the kinds it covers
// (StoreKind: the embedded SQLite store, gnome-keyring on the suite's bus, and the provider
// matrix's gnome-keyring, KeePassXC and kwalletd). Round trips of every attribute and
// binary blobs, duplicates by Apple's primary key, replace in place keeping the creation
// date, label matching, and delete. The checks assert with Swift Testing's #expect and
// #require: an XCTAssert inside a Swift Testing test is not reported on Linux (Swift 6.3),
// so a failing one would pass. `assertThrows` stays XCTest's, for the XCTest classes
// (EmbeddedStoreTests, SecretServiceStoreTests) that use the contract's helpers.
import Foundation
import KeygateTestSupport
import Testing
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

struct ItemStoreContract {
    let store: any ItemStore
    /// The service (and server prefix) of this test's items.
    let tag: String

    /// Bytes no text API would carry: NULs, high bytes, a trailing NUL.
    let binaryBlob: [UInt8] = [0x00, 0x01, 0xff, 0x00, 0x7f, 0x80, 0x0a, 0x0d, 0x00] + Array(0..<255) + [0]

    func genericAttributes(account: String = "alice", label: String? = "Mail for alice") -> ItemAttributes {
        ItemAttributes(identity: .generic(service: tag, account: account), label: label, comment: "a comment",
                       generic: [0x00, 0x42, 0xff, 0x00], accessibility: .afterFirstUnlock)
    }

    /// `written` with the dates the store filled in, for comparing whole values.
    func withDates(_ written: ItemAttributes, from read: ItemAttributes) -> ItemAttributes {
        var expected = written
        expected.created = read.created
        expected.modified = read.modified
        return expected
    }

    /// For XCTest classes: `body` throws a KeychainError with `code`.
    func assertThrows(_ code: KeychainError.Code, _ body: () throws -> Void, messageContains: String? = nil,
                      file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("expected \(code.name), but the call succeeded", file: file, line: line)
        } catch let error as KeychainError {
            XCTAssertEqual(error.code, code, "message: \(error.message)", file: file, line: line)
            if let messageContains {
                XCTAssertTrue(error.message.contains(messageContains), error.message, file: file, line: line)
            }
        } catch {
            XCTFail("expected KeychainError \(code.name), got \(error)", file: file, line: line)
        }
    }

    /// For XCTest classes (the speed checks): stores an item with the binary blob, reads it `count`
    /// times with its blob (each read checked), and gives the median time of one read. `warmUp`:
    /// one read first, not counted (a connection opens its bus and session on its first call).
    func medianWarmGet(count: Int = 20, warmUp: Bool, file: StaticString = #filePath, line: UInt = #line) throws -> Duration {
        let written = genericAttributes()
        try store.create(written, blob: binaryBlob, replace: false)
        let query = ItemQuery(exactly: written.identity)
        if warmUp { _ = try store.search(query, loadBlobs: true) }
        var samples: [Duration] = []
        for _ in 0..<count {
            let started = ContinuousClock.now
            let found = try store.search(query, loadBlobs: true)
            samples.append(ContinuousClock.now - started)
            XCTAssertEqual(found.first?.blob, binaryBlob, file: file, line: line)
        }
        return samples.sorted()[samples.count / 2]
    }

    /// For the Swift Testing checks: `body` throws a KeychainError with `code`.
    func expectThrows(_ code: KeychainError.Code, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("expected \(code.name), but the call succeeded", sourceLocation: sourceLocation)
        } catch let error as KeychainError {
            #expect(error.code == code, "message: \(error.message)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("expected KeychainError \(code.name), got \(error)", sourceLocation: sourceLocation)
        }
    }

    func search_roundTripsGenericItem_withBinaryBlobAndAllAttributes() throws {
        let written = genericAttributes()
        try store.create(written, blob: binaryBlob, replace: false)

        let found = try store.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        #expect(found.count == 1)
        let item = try #require(found.first)
        #expect(item.blob == binaryBlob)
        #expect(item.attributes == withDates(written, from: item.attributes))
        #expect(item.attributes.created > 1_600_000_000)
        #expect(item.attributes.modified >= item.attributes.created)
    }

    /// `written` (an internet item of the backend's choosing) reads back whole, with its blob.
    func search_roundTrips(_ written: ItemAttributes) throws {
        try store.create(written, blob: [0, 0, 0], replace: false)

        let found = try store.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        #expect(found.count == 1)
        let item = try #require(found.first)
        #expect(item.blob == [0, 0, 0])
        #expect(item.attributes == withDates(written, from: item.attributes))
    }

    func search_roundTripsInternetItem_withUnsetOptionalFields() throws {
        let written = ItemAttributes(identity: .internet(server: tag + ".example", account: "carol"), label: "carol")
        try store.create(written, blob: [9], replace: false)

        let found = try store.search(ItemQuery(exactly: written.identity), loadBlobs: true)

        #expect(found.map(\.attributes) == [withDates(written, from: try #require(found.first).attributes)])
        #expect(found.first?.attributes.identity.protocol == nil)
        #expect(found.first?.attributes.identity.authenticationType == nil)
    }

    func search_roundTripsEmptyBlobAndEmptyGeneric() throws {
        var written = genericAttributes()
        written.generic = []
        written.comment = nil
        try store.create(written, blob: [], replace: false)

        let item = try #require(store.search(ItemQuery(exactly: written.identity), loadBlobs: true).first)

        #expect(item.blob == [])
        #expect(item.attributes.generic == [])
        #expect(item.attributes.comment == nil)
    }

    func label_readsBackAsDisplayName_whenWrittenWithoutLabel() throws {
        let written = genericAttributes(label: nil)
        try store.create(written, blob: [1], replace: false)

        let item = try #require(store.search(ItemQuery(exactly: written.identity), loadBlobs: false).first)

        #expect(item.attributes.label == written.identity.displayName)
    }

    /// `.attributes` (what opening a secret reads) brings every attribute a read is decided on;
    /// a query on the label still matches it; `.full` brings the label and the dates too.
    func search_attributesDetail_readsWhatOpeningNeeds_andALabelQueryStillMatches() throws {
        var written = genericAttributes()
        written.accessControl = .userPresence
        written.accessibility = .whenUnlockedThisDeviceOnly
        try store.create(written, blob: binaryBlob, replace: false)
        try store.create(genericAttributes(account: "bob", label: "Mail for bob"), blob: [1], replace: false)

        let brief = try #require(store.search(ItemQuery(exactly: written.identity), loadBlobs: true, detail: .attributes).first)
        #expect(brief.blob == binaryBlob)
        #expect(brief.attributes.identity == written.identity)
        #expect(brief.attributes.accessControl == .userPresence)
        #expect(brief.attributes.accessibility == .whenUnlockedThisDeviceOnly)
        #expect(brief.attributes.comment == written.comment)
        #expect(brief.attributes.generic == written.generic)

        var byLabel = ItemQuery(service: tag)
        byLabel.label = "Mail for bob"
        let labelled = try store.search(byLabel, loadBlobs: false, detail: .attributes)
        #expect(labelled.map(\.attributes.identity.account) == ["bob"], "a label query reads the label it matches")

        let full = try #require(store.search(ItemQuery(exactly: written.identity), loadBlobs: false, detail: .full).first)
        #expect(full.attributes == withDates(written, from: full.attributes))
        #expect(full.attributes.created > 1_600_000_000)
        #expect(full.attributes.modified >= full.attributes.created)
    }

    func search_returnsNilBlobs_whenBlobsNotRequested() throws {
        try store.create(genericAttributes(), blob: [1, 2, 3], replace: false)

        let found = try store.search(ItemQuery(service: tag), loadBlobs: false)

        #expect(found.count == 1)
        #expect(found.first?.blob == nil)
    }

    func search_matchesLabelClientSide_andLeavesNilFieldsOpen() throws {
        try store.create(genericAttributes(account: "a1", label: "first"), blob: [1], replace: false)
        try store.create(genericAttributes(account: "a2", label: "second"), blob: [2], replace: false)

        let all = try store.search(ItemQuery(service: tag), loadBlobs: false)
        let second = try store.search(ItemQuery(service: tag, label: "second"), loadBlobs: true)

        #expect(Set(all.map(\.attributes.identity.account)) == ["a1", "a2"])
        #expect(second.map(\.attributes.identity.account) == ["a2"])
        #expect(second.first?.blob == [2])
        #expect(all.count == 2)
    }

    func search_roundTripsAccessControl_forEachCombination() throws {
        let controls: [AccessControl] = [[.userPresence], [.devicePasscode, .biometryAny, .or],
                                         [.devicePasscode, .biometryCurrentSet, .and], [.biometryCurrentSet]]
        for (i, control) in controls.enumerated() {
            var written = genericAttributes(account: "ac\(i)")
            written.accessControl = control
            try store.create(written, blob: [UInt8(i)], replace: false)

            let item = try #require(store.search(ItemQuery(exactly: written.identity), loadBlobs: false).first)

            #expect(item.attributes.accessControl == control)
            #expect(item.attributes == withDates(written, from: item.attributes))
        }
    }

    func replace_dropsTheAccessControl_whenTheNewAttributesHaveNone() throws {
        var gated = genericAttributes()
        gated.accessControl = .userPresence
        try store.create(gated, blob: [1], replace: false)
        var ungated = gated
        ungated.accessControl = nil

        try store.create(ungated, blob: [2], replace: true)

        let item = try #require(store.search(ItemQuery(exactly: gated.identity), loadBlobs: true).first)
        #expect(item.attributes.accessControl == nil)
        #expect(item.blob == [2])
    }

    func create_throwsDuplicateItem_whenIdentityExists_andReplaceIsFalse() throws {
        try store.create(genericAttributes(), blob: [1], replace: false)

        expectThrows(.duplicateItem) {
            try self.store.create(self.genericAttributes(label: "another label"), blob: [2], replace: false)
        }
        let found = try store.search(ItemQuery(service: tag), loadBlobs: true)
        #expect(found.map(\.blob) == [[1]])
        #expect(found.first?.attributes.label == "Mail for alice", "the refused write changed nothing")
    }

    func create_withReplace_updatesInPlace_keepingCreationDate() throws {
        let first = genericAttributes()
        try store.create(first, blob: [1, 0, 1], replace: false)
        let before = try #require(store.search(ItemQuery(exactly: first.identity), loadBlobs: false).first)
        // Whole seconds, as the Secret Service keeps them (and a store may round): wait until the clock
        // is a full second past the recorded creation, so the update's time is later whatever the rounding.
        Polling.waitUntilClock(isPast: before.attributes.created + 1)

        var second = first
        second.label = "renamed"
        second.comment = "changed"
        second.generic = [7, 7]
        second.accessibility = .whenUnlocked
        try store.create(second, blob: [2, 0, 2, 0], replace: true)

        let found = try store.search(ItemQuery(exactly: first.identity), loadBlobs: true)
        #expect(found.count == 1)
        let after = try #require(found.first)
        #expect(after.blob == [2, 0, 2, 0])
        #expect(after.attributes == withDates(second, from: after.attributes))
        #expect(after.attributes.created == before.attributes.created)
        #expect(after.attributes.modified > before.attributes.created)
    }

    /// A replace that keeps every attribute (a new secret and label only) writes in place: the
    /// creation date stays and the modification date moves.
    func create_withReplace_sameAttributes_keepsCreated_andMovesModified() throws {
        let first = genericAttributes()
        try store.create(first, blob: [1], replace: false)
        let before = try #require(store.search(ItemQuery(exactly: first.identity), loadBlobs: false).first)
        Polling.waitUntilClock(isPast: before.attributes.modified + 1)

        var second = first
        second.label = "relabelled"
        try store.create(second, blob: [2], replace: true)

        let found = try store.search(ItemQuery(exactly: first.identity), loadBlobs: true)
        #expect(found.count == 1)
        let after = try #require(found.first)
        #expect(after.blob == [2])
        #expect(after.attributes == withDates(second, from: after.attributes))
        #expect(after.attributes.created == before.attributes.created)
        #expect(after.attributes.modified > before.attributes.modified)
    }

    func create_withReplace_createsItem_whenNoneExists() throws {
        try store.create(genericAttributes(), blob: [5], replace: true)

        #expect(try store.search(ItemQuery(service: tag), loadBlobs: true).map(\.blob) == [[5]])
    }

    /// kSecAttrSynchronizable is part of the primary key, as on Apple: a synchronizable and a
    /// non-synchronizable item of one service and account are two items, each found, replaced and
    /// deleted by its own key; a search that leaves the flag open finds both.
    func synchronizableTwins_areTwoItems_eachFoundByItsOwnKey() throws {
        let local = genericAttributes(account: "twin")
        var cloud = local
        cloud.synchronizable = true
        try store.create(local, blob: [1], replace: false)
        try store.create(cloud, blob: [2], replace: false)
        #expect(try store.search(ItemQuery(exactly: local.identity), loadBlobs: true).map(\.blob) == [[1]])
        #expect(try store.search(ItemQuery(exactly: cloud.identity), loadBlobs: true).map(\.blob) == [[2]])
        #expect(try store.search(ItemQuery(service: tag, account: "twin"), loadBlobs: false).count == 2)
        #expect(try store.search(ItemQuery(service: tag, account: "twin", synchronizable: false), loadBlobs: true)
            .map(\.blob) == [[1]])
        expectThrows(.duplicateItem, { try store.create(cloud, blob: [3], replace: false) })
        try store.create(cloud, blob: [4], replace: true)
        #expect(try store.search(ItemQuery(exactly: cloud.identity), loadBlobs: true).map(\.blob) == [[4]])
        #expect(try store.search(ItemQuery(exactly: local.identity), loadBlobs: true).map(\.blob) == [[1]], "its twin is untouched")
        #expect(try store.delete(ItemQuery(exactly: cloud.identity)) == 1)
        #expect(try store.search(ItemQuery(exactly: local.identity), loadBlobs: true).map(\.blob) == [[1]])
    }

    /// `internet`: an internet item of this test's (each store keeps what it can of it).
    func delete_returnsCount_andRemovesOnlyMatches(_ internet: ItemAttributes) throws {
        try store.create(genericAttributes(account: "a1"), blob: [1], replace: false)
        try store.create(genericAttributes(account: "a2"), blob: [2], replace: false)
        let other = ItemAttributes(identity: .generic(service: tag + "-other", account: "a1"), label: "other")
        try store.create(other, blob: [3], replace: false)
        try store.create(internet, blob: [4], replace: false)

        #expect(try store.delete(ItemQuery(itemClass: .genericPassword, service: tag)) == 2)

        #expect(try store.search(ItemQuery(service: tag), loadBlobs: false).count == 0)
        #expect(try store.search(ItemQuery(exactly: other.identity), loadBlobs: true).map(\.blob) == [[3]])
        #expect(try store.search(ItemQuery(exactly: internet.identity), loadBlobs: false).count == 1)
        #expect(try store.delete(ItemQuery(itemClass: .genericPassword, service: tag)) == 0)
    }

    func delete_withLabel_deletesOnlyThatLabel() throws {
        try store.create(genericAttributes(account: "a1", label: "keep"), blob: [1], replace: false)
        try store.create(genericAttributes(account: "a2", label: "drop"), blob: [2], replace: false)

        #expect(try store.delete(ItemQuery(service: tag, label: "drop")) == 1)

        #expect(try store.search(ItemQuery(service: tag), loadBlobs: false).map(\.attributes.label) == ["keep"])
    }
}
