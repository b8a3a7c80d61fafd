// Scheme-2 (access-controlled) blobs: every gate combination opens with the right keys
// and only with them; moved, damaged and truncated blobs refuse; the header round-trips.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class GatedBlobTests: XCTestCase {
    let item = ItemIdentity.generic(service: "vpn", account: "alice")

    private struct Keys {
        let master: SecureBytes
        let classPair: BoxKeyPair
        let presence: BoxKeyPair
        let currentSet: BoxKeyPair
        var presenceGate: GateRecipient { GateRecipient(kind: .presence, publicKey: presence.publicKey) }
        var currentSetGate: GateRecipient { GateRecipient(kind: .currentSet, publicKey: currentSet.publicKey) }

        func pairs(_ names: [GateCombinationCase.Key]) -> [BoxKeyPair] {
            names.map { name in
                switch name {
                case .classPair: classPair
                case .presence: presence
                case .currentSet: currentSet
                }
            }
        }
    }

    private func makeKeys() throws -> Keys {
        let master = try SecureBytes.random(count: 32)
        return Keys(master: master, classPair: try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil),
                    presence: try BoxKeyPair.generate(), currentSet: try BoxKeyPair.generate())
    }

    private func seal(_ keys: Keys, _ gates: [GateRecipient], _ combination: GateCombination,
                      secret: String = "hunter2", accessControl: UInt32 = 0) throws -> [UInt8] {
        try GatedBlob.seal(secureBytes(secret), identity: item, accessibility: .whenUnlocked, accessControl: accessControl,
                           classKey: keys.classPair.publicKey, gates: gates, combination: combination)
    }

    private func assertOpens(_ blob: [UInt8], _ pairs: [BoxKeyPair], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(try GatedBlob.open(blob, identity: item, keys: pairs).unprotectedCopy(), Array("hunter2".utf8),
                       file: file, line: line)
    }

    private func assertRefuses(_ blob: [UInt8], _ pairs: [BoxKeyPair], file: StaticString = #filePath, line: UInt = #line) {
        assertThrowsKeychainError(.decode, file: file, line: line) { try GatedBlob.open(blob, identity: self.item, keys: pairs) }
    }

    func test_classOnly_opensWithTheClassPair_andNotWithAnother() throws {
        let keys = try makeKeys()
        let blob = try seal(keys, [], .all)
        assertOpens(blob, [keys.classPair])
        assertRefuses(blob, [try ClassKeys.legacyKeyPair(masterKey: SecureBytes.random(count: 32), for: .whenUnlocked, deviceKey: nil)])
        assertRefuses(blob, [])
    }

    func test_eachGateCombination_opensWithExactlyTheKeysItAsks() throws {
        for combination in GateCombinationCase.all {
            let keys = try makeKeys()
            let blob = try seal(keys, combination.gates.map { $0 == .presence ? keys.presenceGate : keys.currentSetGate },
                                combination.needsAll ? .all : .any)
            for held in combination.opens {
                XCTAssertEqual(try GatedBlob.open(blob, identity: item, keys: keys.pairs(held)).unprotectedCopy(), Array("hunter2".utf8),
                               "\(combination.why): opens with \(held)")
            }
            for held in combination.refuses {
                let error = assertThrowsKeychainError(.decode) { try GatedBlob.open(blob, identity: self.item, keys: keys.pairs(held)) }
                XCTAssertNotNil(error, "\(combination.why): refuses \(held)")
            }
        }
    }

    func test_masterKeyAlone_cannotOpenAPresenceGatedBlob() throws {
        let keys = try makeKeys()
        let blob = try seal(keys, [keys.presenceGate], .all)
        // Everything a holder of the master key can derive: every class pair, and pairs seeded from it.
        var derivable = try Accessibility.allCases.map {
            try ClassKeys.legacyKeyPair(masterKey: keys.master, for: $0, deviceKey: SecureBytes.random(count: 32))
        }
        derivable.append(try BoxKeyPair.derive(seed: keys.master))
        derivable.append(try BoxKeyPair(privateKey: keys.master))
        assertRefuses(blob, derivable)
        assertOpens(blob, derivable + [keys.presence])
    }

    func test_open_fails_whenBlobMovedToAnotherItem() throws {
        let keys = try makeKeys()
        let blob = try seal(keys, [keys.presenceGate], .all)
        for other in [ItemIdentity.generic(service: "vpn", account: "bob"), ItemIdentity.internet(server: "vpn", account: "alice")] {
            let error = assertThrowsKeychainError(.decode) {
                try GatedBlob.open(blob, identity: other, keys: [keys.classPair, keys.presence])
            }
            XCTAssertTrue(error?.message.contains("moved from another item") ?? false, error?.message ?? "")
        }
    }

    func test_open_fails_whenAnyByteIsFlipped() throws {
        let keys = try makeKeys()
        let all = [keys.classPair, keys.presence, keys.currentSet]
        for combination in [GateCombination.any, .all] {
            let blob = try seal(keys, [keys.presenceGate, keys.currentSetGate], combination, accessControl: 0x4000_0001)
            for index in blob.indices {
                var damaged = blob
                damaged[index] ^= 0x01
                assertThrowsKeychainError(.decode) { try GatedBlob.open(damaged, identity: self.item, keys: all) }
            }
        }
    }

    func test_open_fails_whenTruncated() throws {
        let keys = try makeKeys()
        let blob = try seal(keys, [keys.presenceGate], .all)
        for length in [0, 3, 6, 11, 12, GatedBlob.headerLength(gates: 1), blob.count - 1] {
            assertThrowsKeychainError(.decode) {
                try GatedBlob.open(Array(blob.prefix(length)), identity: self.item, keys: [keys.classPair, keys.presence])
            }
        }
    }

    func test_header_roundTripsSlotsKeyIDsAndAccessControlBits() throws {
        let keys = try makeKeys()
        let bits: UInt32 = 0x8000_4003
        let blob = try GatedBlob.seal(secureBytes("s"), identity: item, accessibility: .afterFirstUnlock, accessControl: bits,
                                      classKey: keys.classPair.publicKey, gates: [keys.currentSetGate, keys.presenceGate],
                                      combination: .any)
        let header = try GatedBlob.header(of: blob)
        XCTAssertEqual(header, GatedBlob.Header(
            version: 1, accessibility: .afterFirstUnlock, accessControl: bits, combination: .any,
            classSlot: .init(kind: .accessClass, keyID: keys.classPair.keyID),
            gateSlots: [.init(kind: .currentSet, keyID: keys.currentSet.keyID), .init(kind: .presence, keyID: keys.presence.keyID)]))
        XCTAssertEqual(blob.count, header.length + 1 + AEAD.tagBytes)
        XCTAssertEqual(try SealedBlob.header(of: blob),
                       SealedBlob.Header(version: 1, scheme: GatedBlob.scheme, accessibility: .afterFirstUnlock))
        XCTAssertEqual(GatedBlob.scheme, 2)
    }

    func test_sealedBlobOpen_refusesAGatedBlobWithDecode() throws {
        let keys = try makeKeys()
        let blob = try seal(keys, [], .all)
        let error = assertThrowsKeychainError(.decode) { try SealedBlob.open(blob, identity: item, classKey: SecureBytes.random(count: 32)) }
        XCTAssertTrue(error?.message.contains("access-controlled") ?? false, error?.message ?? "")
        let plain = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: SecureBytes.random(count: 32))
        assertThrowsKeychainError(.decode) { try GatedBlob.open(plain, identity: item, keys: [keys.classPair]) }
    }

    func test_seal_usesFreshKeysEachTime() throws {
        let keys = try makeKeys()
        XCTAssertNotEqual(try seal(keys, [keys.presenceGate], .all), try seal(keys, [keys.presenceGate], .all))
    }

    func test_seal_throwsParam_forBadRecipients() throws {
        let keys = try makeKeys()
        assertThrowsKeychainError(.param) { try self.seal(keys, [GateRecipient(kind: .accessClass, publicKey: keys.presence.publicKey)], .all) }
        assertThrowsKeychainError(.param) { try self.seal(keys, [GateRecipient(kind: .presence, publicKey: [1, 2, 3])], .all) }
        assertThrowsKeychainError(.param) {
            try self.seal(keys, Array(repeating: keys.presenceGate, count: GatedBlob.maxGates + 1), .any)
        }
        assertThrowsKeychainError(.param) {
            try GatedBlob.seal(SecureBytes(count: SealedBlob.maxSecretLength + 1), identity: self.item, accessibility: .whenUnlocked,
                               accessControl: 0, classKey: keys.classPair.publicKey, gates: [], combination: .any)
        }
    }
}

/// A gate combination: the gates a blob is sealed with (`needsAll`: every one, else any one),
/// the key sets that open it, and those that must not.
struct GateCombinationCase {
    enum Key { case classPair, presence, currentSet }

    let why: String
    let gates: [Key]
    let needsAll: Bool
    let opens: [[Key]]
    let refuses: [[Key]]

    static let all = [
        GateCombinationCase(why: "class and presence need both", gates: [.presence], needsAll: true,
                            opens: [[.classPair, .presence], [.presence, .currentSet, .classPair]],
                            refuses: [[.classPair], [.presence], [.classPair, .currentSet]]),
        GateCombinationCase(why: "class and current set need both", gates: [.currentSet], needsAll: false,
                            opens: [[.classPair, .currentSet]], refuses: [[.classPair], [.classPair, .presence]]),
        GateCombinationCase(why: "any of presence and current set opens with either", gates: [.presence, .currentSet], needsAll: false,
                            opens: [[.classPair, .presence], [.classPair, .currentSet]], refuses: [[.classPair], [.presence, .currentSet]]),
        GateCombinationCase(why: "all of presence and current set needs both, and fails with only one",
                            gates: [.presence, .currentSet], needsAll: true, opens: [[.classPair, .presence, .currentSet]],
                            refuses: [[.classPair, .presence], [.classPair, .currentSet], [.presence, .currentSet]]),
    ]
}
