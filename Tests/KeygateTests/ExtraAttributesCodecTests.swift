// Extra attributes (ItemAttributes.extras) in the flat string attributes both stores
// keep (ItemAttributeCodec): stored beside Keygate's own, read back, matched by a query, never
// taking one of Keygate's names; an item stored before extras existed reads with none.
import XCTest
@testable import KeygateCore
@testable import KeygateStorage

final class ExtraAttributesCodecTests: XCTestCase {
    func test_extras_roundTrip_besideKeygatesOwnAttributes() throws {
        var item = ItemAttributes(identity: .generic(service: "deploy", account: "ci"), label: "Deploy")
        item.extras = ["env": "prod", "myapp": "x y"]
        let encoded = ItemAttributeCodec.encode(item)
        XCTAssertEqual(encoded["env"], "prod")
        XCTAssertEqual(encoded["myapp"], "x y")
        XCTAssertEqual(encoded["service"], "deploy")
        let decoded = try XCTUnwrap(ItemAttributeCodec.decode(encoded.merging(["xdg:schema": "io.keygate.Item"]) { a, _ in a },
                                                               label: "Deploy", created: 0, modified: 0))
        XCTAssertEqual(decoded.extras, ["env": "prod", "myapp": "x y"], "xdg:schema and Keygate's own names are not extras")
        XCTAssertEqual(decoded.identity, item.identity)
    }

    func test_anItemStoredBeforeExtras_readsWithNone() throws {
        let old = ["keygate:class": "genp", "service": "vpn", "account": "alice", "keygate:accessible": "when-unlocked",
                   "keygate:label": "VPN", "keygate:created": "1", "keygate:modified": "2"]
        let decoded = try XCTUnwrap(ItemAttributeCodec.decode(old, label: "", created: 0, modified: 0))
        XCTAssertEqual(decoded.extras, [:])
        XCTAssertEqual(decoded.identity, .generic(service: "vpn", account: "alice"))
    }

    func test_aQuery_constrainsItsExtras_andMatchesOnlyItemsWithEveryOne() {
        var query = ItemQuery(service: "deploy")
        query.extras = ["env": "prod"]
        XCTAssertEqual(ItemAttributeCodec.encode(query)["env"], "prod")
        var item = ItemAttributes(identity: .generic(service: "deploy", account: "ci"))
        XCTAssertFalse(query.matches(item))
        item.extras = ["env": "prod", "team": "ops"]
        XCTAssertTrue(query.matches(item))
        query.extras["team"] = "dev"
        XCTAssertFalse(query.matches(item))
    }

    func test_keygatesOwnNames_areNeverExtras() {
        for name in ItemAttributeCodec.keyNames {
            XCTAssertTrue(ItemAttributes.ownAttributeNames.contains(name), name)
            XCTAssertFalse(ItemAttributes.isExtraName(name), name)
        }
        for name in ["xdg:schema", "keygate:anything", ""] { XCTAssertFalse(ItemAttributes.isExtraName(name), name) }
        // KeePassXC's own fields, which it shows as attributes of every item and refuses to have written back.
        for name in ["Title", "UserName", "URL", "Notes", "Path", "Uuid", "FDO_SECRETS_CONTENT_TYPE"] {
            XCTAssertFalse(ItemAttributes.isExtraName(name), name)
        }
        for name in ["myapp", "env", "user-id", "Service"] { XCTAssertTrue(ItemAttributes.isExtraName(name), name) }
        var item = ItemAttributes(identity: .generic(service: "s", account: "a"))
        item.extras = ["keygate:access": "none", "service": "other"]
        let encoded = ItemAttributeCodec.encode(item)
        XCTAssertNil(encoded["keygate:access"], "an extra never sets Keygate's own attribute")
        XCTAssertEqual(encoded["service"], "s")
    }
}
