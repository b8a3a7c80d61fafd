// ItemField is the one description of an item's fields: identity, query, changes, limits and
// the stores' attributes all come from it. These checks plant what a new field needs and see
// each derived piece follow: the exact query sets every key field, its identity comes back,
// changes apply every field, the limits refuse every field, and a key's tail leaves the sealed
// name (and the key bytes of an item without it) as they were.
import XCTest
@testable import KeygateCore
@testable import KeygateStorage

final class ItemFieldTests: XCTestCase {
    private let grouped = ItemIdentity.internet(server: "example.com", account: "alice", protocol: .https, port: 443,
                                                path: "/x", securityDomain: "realm", authenticationType: .httpBasic,
                                                synchronizable: true, accessGroup: "TEAM.app1")

    /// ItemFieldTexts keeps one slot per field: each field's place is its place in the table, and
    /// every field set keeps its own text (a field added to the table without its place fails here).
    func test_eachFieldHasItsOwnSlot_inTheTablesOrder() {
        XCTAssertEqual(ItemField.ordered, ItemField.allCases)
        XCTAssertEqual(ItemField.ordered.map(\.ordinal), Array(ItemField.allCases.indices))
        var texts = ItemFieldTexts()
        XCTAssertTrue(texts.isEmpty)
        for field in ItemField.allCases { texts[field] = "v-" + field.rawValue }
        XCTAssertEqual(texts.count, ItemField.allCases.count)
        XCTAssertEqual(texts.setFields, ItemField.allCases)
        for field in ItemField.allCases { XCTAssertEqual(texts[field], "v-" + field.rawValue) }
        texts[.path] = nil
        XCTAssertEqual(texts.count, ItemField.allCases.count - 1)
        XCTAssertFalse(texts.setFields.contains(.path))
    }

    func test_theExactQuery_setsEveryKeyField_andGivesTheIdentityBack() {
        for identity in [grouped, ItemIdentity.generic(service: "s", account: "a", accessGroup: "TEAM.g"), .generic(service: "s", account: "a")] {
            let query = ItemQuery(exactly: identity)
            XCTAssertEqual(Set(query.fields.setFields), Set(ItemField.primaryKey(of: identity.itemClass)))
            XCTAssertEqual(query.exactIdentity, identity)
        }
        var wider = ItemQuery(exactly: grouped)
        wider.label = "x"
        XCTAssertNil(wider.exactIdentity, "a query that sets more than the key is not one item's")
        wider = ItemQuery(exactly: grouped)
        wider.accessGroup = nil
        XCTAssertNil(wider.exactIdentity, "nor one that leaves a key field open")
    }

    func test_theKeysTail_isOutOfTheSealedName_andAbsentFromTheKeyBytesWhenUnset() {
        var plain = grouped
        plain.accessGroup = ""
        plain.synchronizable = false
        XCTAssertEqual(grouped.canonicalBytes, plain.canonicalBytes, "the group and the flag are not sealed")
        XCTAssertEqual(plain.storeKey, plain.canonicalBytes, "an item with neither keeps its name as its key, byte for byte")
        XCTAssertNotEqual(grouped.storeKey, plain.storeKey)
        var otherGroup = grouped
        otherGroup.accessGroup = "TEAM.app2"
        XCTAssertNotEqual(grouped.storeKey, otherGroup.storeKey)
        XCTAssertNotEqual(grouped, otherGroup, "two groups: two identities")
    }

    func test_changes_applyEveryFieldOfTheClass_andTheLimitsCheckEveryField() throws {
        let item = ItemAttributes(identity: grouped)
        for field in ItemField.allCases where field.belongs(to: .internetPassword) {
            var changes = ItemChanges()
            let value = field.kind == .port ? "8080" : field.kind == .flag ? "" : field.kind == .bytes ? "AQI=" : "v"
            changes[field] = value
            XCTAssertEqual(changes.applied(to: item)[field] ?? "", value, "\(field)")
            guard let limit = field.limit else { continue }
            var long = ItemChanges()
            long[field] = field.kind == .bytes ? Base64Text.encode(Array(repeating: 1, count: limit + 1)) : String(repeating: "x", count: limit + 1)
            XCTAssertThrowsError(try ItemFieldLimits.check(long), "\(field)")
            var query = ItemQuery()
            query[field] = field.kind == .bytes ? nil : "a\u{0}b"
            if field.kind != .bytes { XCTAssertThrowsError(try ItemFieldLimits.check(query), "\(field): a NUL") }
        }
    }

    func test_theCodec_roundTripsEveryField_andStoresTheGroupUnderItsName() throws {
        var item = ItemAttributes(identity: grouped, label: "l", comment: "c", generic: [1, 2], description: "d")
        item.extras = ["myapp": "x"]
        let encoded = ItemAttributeCodec.encode(item)
        XCTAssertEqual(encoded["access-group"], "TEAM.app1")
        XCTAssertEqual(encoded["synchronizable"], "1")
        let decoded = try XCTUnwrap(ItemAttributeCodec.decode(encoded, label: "l", created: 0, modified: 0))
        XCTAssertEqual(decoded, item)
        XCTAssertEqual(ItemAttributeCodec.encode(ItemQuery(exactly: grouped))["access-group"], "TEAM.app1")
        XCTAssertNil(ItemAttributeCodec.encode(ItemQuery(exactly: .generic(service: "s", account: "a")))["access-group"],
                     "no group is matched client-side: items stored without the attribute")
    }
}
