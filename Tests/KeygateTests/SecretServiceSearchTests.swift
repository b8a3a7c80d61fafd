// The embedded store's Secret Service search (EmbeddedStore.secretServiceSearch): every item
// that holds each asked attribute pair, in id order, with no row twice, for clients' items (by
// collection or not) and Keygate's own, whatever the number of pairs asked. Real SQLite, in a
// throwaway folder.
import Foundation
import KeygateTestSupport
import XCTest
@testable import KeygateCore
@testable import KeygateStorage

final class SecretServiceSearchTests: XCTestCase {
    private var store: EmbeddedStore!

    override func setUpWithError() throws {
        store = EmbeddedStore(directory: try makeTemporaryFolder(self) + "/data")
        try store.create(ItemAttributes(identity: .generic(service: "s0", account: "a0")), blob: [1], replace: false)
        try store.prepareSecretServiceTables()
    }

    func test_clientItems_areFoundByEveryPairAsked_inIdOrder_once() throws {
        // 24 items over two collections, with attributes that overlap in every way.
        var expected: [(id: Int64, collection: String, attributes: [String: String])] = []
        for n in 0..<24 {
            let collection = n % 3 == 0 ? "work" : "login"
            let attributes = ["service": "svc\(n % 4)", "user": "u\(n % 2)", "n": "\(n)", "both": "x"]
            let row = try store.writeForeignItem(ForeignItemRow(collection: collection, uid: Array(repeating: UInt8(n), count: 16),
                                                                label: "item \(n)", contentType: "text/plain",
                                                                attributes: attributes, blob: [UInt8(n)]), replacing: nil)
            expected.append((row.id, collection, attributes))
        }
        let queries: [[String: String]] = [[:], ["both": "x"], ["service": "svc1"], ["service": "svc2", "user": "u0"],
                                           ["service": "svc3", "user": "u1", "both": "x"], ["service": "svc3", "user": "u0"],
                                           ["n": "7", "both": "x", "user": "u1", "service": "svc3"], ["nope": "x"], ["both": "y"]]
        for query in queries {
            for collection in [nil, "login", "work", "none"] as [String?] {
                let found = try store.secretServiceSearch(keygateAttributes: nil, collection: collection, attributes: query).clients
                let want = expected.filter { item in
                    (collection == nil || item.collection == collection) && query.allSatisfy { item.attributes[$0.key] == $0.value }
                }
                XCTAssertEqual(found.map(\.id), want.map(\.id), "\(query) in \(collection ?? "any")")
                XCTAssertEqual(found.map(\.attributes), want.map(\.attributes), "\(query) in \(collection ?? "any")")
            }
        }
        XCTAssertEqual(try store.secretServiceSearch(keygateAttributes: nil, collection: nil, attributes: ["service": "svc2", "user": "u0"])
            .clients.count, 6, "n = 2, 6, 10, 14, 18, 22")
    }

    func test_keygateItems_areFoundByEveryPairAsked_inIdOrder() throws {
        try store.create(ItemAttributes(identity: .generic(service: "s1", account: "a1")), blob: [2], replace: false)
        try store.create(ItemAttributes(identity: .generic(service: "s1", account: "a2")), blob: [3], replace: false)
        let a1 = ItemAttributeCodec.encode(ItemAttributes(identity: .generic(service: "s1", account: "a1")))
        let a2 = ItemAttributeCodec.encode(ItemAttributes(identity: .generic(service: "s1", account: "a2")))
        let shared = a1.filter { a2[$0.key] == $0.value }
        XCTAssertFalse(shared.isEmpty)
        func found(_ query: [String: String]) throws -> [String] {
            try store.secretServiceSearch(keygateAttributes: query, collection: nil, attributes: [:]).keygate
                .map { ItemAttributeCodec.encode($0.item.attributes)["account"] ?? $0.item.attributes.identity.displayName }
        }
        XCTAssertEqual(try found([:]).count, 3)
        XCTAssertEqual(try found(shared).count, 2)
        XCTAssertEqual(try found(a1).count, 1)
        XCTAssertEqual(try found(a1.merging(["nope": "x"]) { $1 }).count, 0)
        let ids = try store.secretServiceSearch(keygateAttributes: shared, collection: nil, attributes: [:]).keygate.map(\.id)
        XCTAssertEqual(ids, ids.sorted())
    }
}
