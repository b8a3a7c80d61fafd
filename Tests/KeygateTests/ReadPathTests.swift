// A read is one arrow down (docs/ARCHITECTURE.md, "A read, one arrow down"): the policy
// decision, one fetch, what the item needs as a value (ReadNeed), one unlocker that satisfies
// it (KeyUnlocker.satisfy, the only part that talks to the cache, the key store and the
// gatekeeper), then the item is opened. The value's own behaviour is tested here with real
// sealed blobs and nothing else; the source rules below fail when the path grows back and
// forth again.
import Foundation
import KeygateTestSupport
import XCTest
@testable import Keygate
@testable import KeygateCore
@testable import KeygateStorage

final class ReadPathTests: XCTestCase {
    let identity = ItemIdentity.generic(service: "vpn", account: "alice")

    private func gatedItem(flags: AccessControl?, gates: [GateKind], combination: GateCombination = .all,
                           accessibility: Accessibility = .whenUnlocked) throws -> (StoredItem, BoxKeyPair) {
        let classPair = try BoxKeyPair.generate()
        let recipients = try gates.map { GateRecipient(kind: $0, publicKey: try BoxKeyPair.generate().publicKey) }
        let blob = try GatedBlob.seal(secureBytes("hunter2"), identity: identity, accessibility: accessibility,
                                      accessControl: flags?.rawValue ?? 0, classKey: classPair.publicKey,
                                      gates: recipients, combination: combination)
        var attributes = ItemAttributes(identity: identity)
        attributes.accessibility = accessibility
        attributes.accessControl = flags
        return (StoredItem(attributes: attributes, blob: blob), classPair)
    }

    func test_aGatedItem_needsItsGateSlots_andOpensWithTheClassPairAndTheShares() throws {
        let (item, classPair) = try gatedItem(flags: .userPresence, gates: [.presence])
        let need = try ReadNeed(item: item, identity: identity, decision: PolicyDecision())
        guard case .gated(let header, let slots) = need.seal else { return XCTFail("a gated blob reads as \(need.seal)") }
        XCTAssertEqual(slots, [0])
        XCTAssertEqual(header.gateSlots.map(\.kind), [.presence])
        XCTAssertTrue(need.needsPresence)
        XCTAssertNil(need.floor, "the item's own access decides")
        // Without the presence share the item does not open; the class pair alone is not enough.
        XCTAssertThrowsError(try need.open(with: .gated(classPair: classPair, shares: [nil], classShare: nil)))
    }

    func test_aPlainItem_needsTheClassKeyOnly_andOpensWithIt() throws {
        let classKey = try SecureBytes.random(count: 32)
        let blob = try SealedBlob.seal(secureBytes("hunter2"), identity: identity, accessibility: .whenUnlocked, classKey: classKey)
        let need = try ReadNeed(item: StoredItem(attributes: ItemAttributes(identity: identity), blob: blob),
                                identity: identity, decision: PolicyDecision())
        guard case .classKey = need.seal else { return XCTFail("a scheme-1 blob reads as \(need.seal)") }
        XCTAssertFalse(need.needsPresence)
        XCTAssertEqual(try need.open(with: .classKey(classKey)).unprotectedCopy(), Array("hunter2".utf8))
        XCTAssertThrowsError(try need.open(with: .classKey(try SecureBytes.random(count: 32))), "another class key opens nothing")
    }

    func test_aPolicyFloorAboveTheSealedAccess_isPartOfTheNeed() throws {
        let classKey = try SecureBytes.random(count: 32)
        let blob = try SealedBlob.seal(secureBytes("hunter2"), identity: identity, accessibility: .whenUnlocked, classKey: classKey)
        let item = StoredItem(attributes: ItemAttributes(identity: identity), blob: blob)
        let need = try ReadNeed(item: item, identity: identity, decision: PolicyDecision(minimumAccess: .userPresence))
        XCTAssertEqual(need.floor, .userPresence)
        // A gated item already sealed with what the floor asks for needs nothing more.
        let (gated, _) = try gatedItem(flags: .userPresence, gates: [.presence])
        XCTAssertNil(try ReadNeed(item: gated, identity: identity, decision: PolicyDecision(minimumAccess: .userPresence)).floor)
    }

    func test_anOrItem_asksForItsPresenceSlot_andEveryDeviceSlot() throws {
        let (item, _) = try gatedItem(flags: AccessControl([.userPresence, .currentSet, .or]), gates: [.currentSet, .presence, .device],
                                      combination: .any, accessibility: .whenUnlockedThisDeviceOnly)
        var attributes = item.attributes
        attributes.accessibility = .whenUnlockedThisDeviceOnly
        let need = try ReadNeed(item: StoredItem(attributes: attributes, blob: item.blob), identity: identity, decision: PolicyDecision())
        guard case .gated(_, let slots) = need.seal else { return XCTFail("gated") }
        XCTAssertEqual(slots, [1, 2], "the presence slot (not the first) and the device slot")
        XCTAssertFalse(need.isLegacyDeviceOnly, "it has the gatekeeper's device slot")
    }

    func test_tampering_isRefusedBeforeAnythingIsAsked() throws {
        let (item, _) = try gatedItem(flags: .userPresence, gates: [.presence])
        var openAttribute = item
        openAttribute.attributes.accessControl = nil
        assertThrowsKeychainError(.decode) { _ = try ReadNeed(item: openAttribute, identity: self.identity, decision: PolicyDecision()) }
        var otherClass = item
        otherClass.attributes.accessibility = .afterFirstUnlock
        assertThrowsKeychainError(.decode) { _ = try ReadNeed(item: otherClass, identity: self.identity, decision: PolicyDecision()) }
        var noBlob = item
        noBlob.blob = nil
        assertThrowsKeychainError(.decode) { _ = try ReadNeed(item: noBlob, identity: self.identity, decision: PolicyDecision()) }
    }

    // MARK: The path's shape, in the sources

    func testTheReadPathGoesOneWayDown() throws {
        XCTAssertEqual(try ReadPathRules.violations(in: ReadPathRules.sources()), [])
    }

    func testAnOperationReachingIntoTheUnlockersPartsFails() throws {
        var sources = try ReadPathRules.sources()
        XCTAssertGreaterThanOrEqual(sources.count, 8, "the sources were read")
        sources["Sources/Keygate/Operations/KeychainOperations.swift", default: ""] += "\nlet held = keys.cache.load(KeyUnlocker.masterName)\n"
        sources["Sources/Keygate/Unlocking/ReadNeed.swift", default: ""] += "\nlet again = try store.search(query)\n"
        sources["Sources/Keygate/Unlocking/ReadUnlock.swift", default: ""] += "\nlet moved = try itemStore?.search(query)\n"
        sources["Sources/Keygate/Unlocking/PasswordChange.swift", default: ""] += "\ntry store.create(attributes, blob: blob, replace: true)\n"
        sources["Sources/Keygate/Unlocking/KeyUnlocker.swift", default: ""] += "\nvar gate: GateAccess { GateAccess() }\n"
        sources["Sources/Keygate/Operations/KeychainOperations+Update.swift", default: ""] += "\nlet held = keys.source.cachedMaster\n"
        XCTAssertEqual(try ReadPathRules.violations(in: sources), [
            "Sources/Keygate/Operations/KeychainOperations+Update.swift reaches into the unlocker's parts (`.source`): ask KeyUnlocker",
            "Sources/Keygate/Operations/KeychainOperations.swift reaches into the unlocker's parts (`.cache`): ask KeyUnlocker",
            "Sources/Keygate/Unlocking/KeyUnlocker.swift builds `gate` on every access: keep it a stored `let`",
            "Sources/Keygate/Unlocking/PasswordChange.swift reaches the items (`store.create`): the unlocker holds no store; "
                + "what an unlock owes the items is a FollowUp the operation runs",
            "Sources/Keygate/Unlocking/ReadNeed.swift reaches the items (`store.search`): the unlocker holds no store; "
                + "what an unlock owes the items is a FollowUp the operation runs",
            "Sources/Keygate/Unlocking/ReadNeed.swift is the read's pure value, yet names `store.`",
            "Sources/Keygate/Unlocking/ReadUnlock.swift reaches the items (`itemStore`): the unlocker holds no store; "
                + "what an unlock owes the items is a FollowUp the operation runs",
        ])
    }

    // MARK: try? in Unlocking

    /// Every `try?` in Unlocking says on its line why ignoring the error is safe (a `//` comment),
    /// and there are never more of them than `tryQuestionCeiling`: the count only falls.
    func testEveryTryQuestionInUnlocking_saysWhy_andTheCountOnlyFalls() throws {
        let found = ReadPathRules.tryQuestions(in: try ReadPathRules.sources().filter { $0.key.hasPrefix(ReadPathRules.unlocking) })
        XCTAssertEqual(found.unexplained, [], "a `try?` with no reason on its line")
        XCTAssertLessThanOrEqual(found.count, ReadPathRules.tryQuestionCeiling,
                                 "more `try?` in Keygate/Unlocking than before: handle the error instead")
    }

    func testATryQuestionWithoutAReason_isCaught() {
        let planted = ["Sources/Keygate/Unlocking/X.swift": "let a = try? f()   // try?: nil is fine here\nlet b = try? g()\n// try? in a comment\n"]
        let found = ReadPathRules.tryQuestions(in: planted)
        XCTAssertEqual(found.count, 2)
        XCTAssertEqual(found.unexplained, ["Sources/Keygate/Unlocking/X.swift:2"])
    }
}

/// The read path's rules, read from the sources.
enum ReadPathRules {
    static let operations = "Sources/Keygate/Operations/"
    static let need = "Sources/Keygate/Unlocking/ReadNeed.swift"
    static let unlocking = "Sources/Keygate/Unlocking/"
    static let unlocker = "Sources/Keygate/Unlocking/KeyUnlocker.swift"

    /// The files of Operations/ and Unlocking/, by their path from the package root.
    static func sources() throws -> [String: String] {
        var out: [String: String] = [:]
        for (file, text) in try PackagePaths.swiftSources(under: "Sources/Keygate")
        where file.hasPrefix("Operations/") || file.hasPrefix("Unlocking/") {
            out["Sources/Keygate/" + file] = text
        }
        return out
    }

    /// Code lines only: a comment may name anything.
    private static func code(_ text: String) -> [Substring] {
        text.split(separator: "\n").filter { !$0.drop { $0 == " " }.hasPrefix("//") }
    }

    /// How many `try?` Keygate/Unlocking may hold: lower it when one goes, never raise it.
    static let tryQuestionCeiling = 16

    /// The `try?` in code lines (a comment line may name anything), and those whose line carries
    /// no `//` reason, as "path:line".
    static func tryQuestions(in sources: [String: String]) -> (count: Int, unexplained: [String]) {
        var count = 0
        var unexplained: [String] = []
        for (path, text) in sources.sorted(by: { $0.key < $1.key }) {
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.drop { $0 == " " }
                guard !code.hasPrefix("//"), let at = code.range(of: "try?") else { continue }
                let comment = code.range(of: "//")
                if let comment, comment.lowerBound < at.lowerBound { continue }
                count += code[..<(comment?.lowerBound ?? code.endIndex)].components(separatedBy: "try?").count - 1
                if comment == nil { unexplained.append("\(path):\(n + 1)") }
            }
        }
        return (count, unexplained)
    }

    static func violations(in sources: [String: String]) throws -> [String] {
        var out: [String] = []
        for (path, text) in sources.sorted(by: { $0.key < $1.key }) {
            let lines = code(text)
            func names(_ pattern: String) throws -> String? {
                let regex = try NSRegularExpression(pattern: pattern)
                for line in lines {
                    let s = String(line)
                    if let m = regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)), let r = Range(m.range, in: s) {
                        return String(s[r])
                    }
                }
                return nil
            }
            if path.hasPrefix(operations) {
                // The operations ask the unlocker; only it holds the key source and the gatekeeper.
                if let found = try names(#"\.(keyStore|cache|gate|source)\b|\b(KeyStore|KeyCache|KeySource|GateAccess|GateClient)\("#) {
                    out.append("\(path) reaches into the unlocker's parts (`\(found)`): ask KeyUnlocker")
                }
            }
            if path.hasPrefix(unlocking), let found = try names(#"\b(itemStore|ItemStore|LegacyGateMigration)\b|\bstore\.(search|create|delete)\b"#) {
                out.append("\(path) reaches the items (`\(found)`): the unlocker holds no store; what an unlock owes the items is a FollowUp the operation runs")
            }
            if path == need, let found = try names(#"\bKeyUnlocker\b|\bstore\.|\bcache\b|\bgate\.|\bprompter\b"#) {
                out.append("\(path) is the read's pure value, yet names `\(found)`")
            }
            if path == unlocker {
                for part in ["source", "gate"] where try names(#"\bvar \#(part)\s*:[^=]*\{"#) != nil {
                    out.append("\(path) builds `\(part)` on every access: keep it a stored `let`")
                }
            }
        }
        return out
    }
}
