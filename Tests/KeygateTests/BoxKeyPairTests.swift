// X25519 key pairs, sealed boxes and class key pairs: determinism, key ids, and the
// device-key binding of the this-device-only classes.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class BoxKeyPairTests: XCTestCase {
    func test_generate_givesDistinctPairs_withAnEightByteKeyID() throws {
        let a = try BoxKeyPair.generate(), b = try BoxKeyPair.generate()
        XCTAssertEqual(a.publicKey.count, 32)
        XCTAssertEqual(a.privateKey.count, 32)
        XCTAssertNotEqual(a.publicKey, b.publicKey)
        XCTAssertEqual(a.keyID.count, 8)
        XCTAssertEqual(a.keyID, BoxKeyPair.keyID(of: a.publicKey))
        XCTAssertNotEqual(a.keyID, b.keyID)
        XCTAssertNotEqual(a.keyID, Array(a.publicKey.prefix(8)), "the id is a hash, not a slice of the key")
    }

    func test_derive_isDeterministic_andRebuildingFromThePrivateKeyGivesThePublicKey() throws {
        let seed = try SecureBytes.random(count: 32)
        let a = try BoxKeyPair.derive(seed: seed)
        let b = try BoxKeyPair.derive(seed: secureBytes(seed.unprotectedCopy()))
        XCTAssertEqual(a.publicKey, b.publicKey)
        XCTAssertTrue(a.privateKey.constantTimeEquals(b.privateKey))
        XCTAssertEqual(try BoxKeyPair(privateKey: a.privateKey).publicKey, a.publicKey)
        XCTAssertNotEqual(try BoxKeyPair.derive(seed: SecureBytes.random(count: 32)).publicKey, a.publicKey)
        assertThrowsKeychainError(.param) { try BoxKeyPair.derive(seed: SecureBytes.random(count: 16)) }
    }

    func test_sealedBox_opensOnlyWithTheRecipientsPrivateKey() throws {
        let pair = try BoxKeyPair.generate()
        let box = try SealedBox.seal(secureBytes("k"), to: pair.publicKey)
        XCTAssertEqual(box.count, 1 + SealedBox.overhead)
        XCTAssertEqual(try SealedBox.open(box[...], with: pair)?.unprotectedCopy(), Array("k".utf8))
        XCTAssertNil(try SealedBox.open(box[...], with: BoxKeyPair.generate()))
        var damaged = box
        damaged[damaged.count - 1] ^= 1
        XCTAssertNil(try SealedBox.open(damaged[...], with: pair))
    }

    func test_deriveWithAKnownPublicKey_givesLibsodiumsPrivateHalf() throws {
        for _ in 0..<16 {
            let seed = try SecureBytes.random(count: BoxKeyPair.seedBytes)
            let full = try BoxKeyPair.derive(seed: seed)
            let quick = try BoxKeyPair.derive(seed: seed, knownPublicKey: full.publicKey)
            XCTAssertEqual(quick.privateKey.unprotectedCopy(), full.privateKey.unprotectedCopy(),
                           "crypto_box_seed_keypair's private half is the first 32 bytes of SHA-512(seed)")
            XCTAssertEqual(quick.publicKey, full.publicKey)
            let box = try SealedBox.seal(secureBytes("share"), to: full.publicKey)
            XCTAssertEqual(SealedBox.openToArray(box[...], with: quick), Array("share".utf8))
        }
        let seed = try SecureBytes.random(count: BoxKeyPair.seedBytes)
        let other = try BoxKeyPair.generate()
        let wrong = try BoxKeyPair.derive(seed: seed, knownPublicKey: other.publicKey)
        let box = try SealedBox.seal(secureBytes("share"), to: try BoxKeyPair.derive(seed: seed).publicKey)
        XCTAssertNil(SealedBox.openToArray(box[...], with: wrong), "a wrong public half opens nothing")
    }

    func test_sealedBox_opensIntoAnArray_asIntoLockedMemory() throws {
        let pair = try BoxKeyPair.generate()
        let box = try SealedBox.seal(secureBytes("share"), to: pair.publicKey)
        XCTAssertEqual(SealedBox.openToArray(box[...], with: pair), Array("share".utf8))
        XCTAssertNil(SealedBox.openToArray(box[...], with: try BoxKeyPair.generate()))
        var damaged = box
        damaged[0] ^= 1
        XCTAssertNil(SealedBox.openToArray(damaged[...], with: pair))
        XCTAssertNil(SealedBox.openToArray(box.prefix(SealedBox.overhead - 1), with: pair), "shorter than a box")
    }

    func test_classKeyPair_isDeterministic_perClass_andNotTheSymmetricClassKey() throws {
        let master = try SecureBytes.random(count: 32)
        let device = try SecureBytes.random(count: 32)
        var publicKeys: Set<[UInt8]> = []
        for accessibility in Accessibility.allCases {
            let pair = try ClassKeys.legacyKeyPair(masterKey: master, for: accessibility, deviceKey: device)
            let again = try ClassKeys.legacyKeyPair(masterKey: secureBytes(master.unprotectedCopy()), for: accessibility, deviceKey: device)
            XCTAssertEqual(pair.publicKey, again.publicKey, accessibility.rawValue)
            publicKeys.insert(pair.publicKey)
            let symmetric = try ClassKeys.derive(masterKey: master, for: accessibility)
            XCTAssertFalse(pair.privateKey.constantTimeEquals(symmetric), accessibility.rawValue)
        }
        XCTAssertEqual(publicKeys.count, Accessibility.allCases.count)
        let other = try ClassKeys.legacyKeyPair(masterKey: SecureBytes.random(count: 32), for: .whenUnlocked, deviceKey: nil)
        XCTAssertFalse(publicKeys.contains(other.publicKey))
    }

    func test_classKeyPair_thisDeviceOnly_throwsParam_withoutADeviceKey() throws {
        let master = try SecureBytes.random(count: 32)
        for accessibility in Accessibility.allCases where accessibility.isThisDeviceOnly {
            let error = assertThrowsKeychainError(.param) { try ClassKeys.legacyKeyPair(masterKey: master, for: accessibility, deviceKey: nil) }
            XCTAssertTrue(error?.message.contains("device key") ?? false, error?.message ?? "")
        }
        XCTAssertNoThrow(try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil))
    }

    func test_classKeyPair_thisDeviceOnly_dependsOnTheDeviceKey_otherClassesDoNot() throws {
        let master = try SecureBytes.random(count: 32)
        let hostA = try SecureBytes.random(count: 32), hostB = try SecureBytes.random(count: 32)
        let a = try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlockedThisDeviceOnly, deviceKey: hostA)
        let b = try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlockedThisDeviceOnly, deviceKey: hostB)
        XCTAssertNotEqual(a.publicKey, b.publicKey)
        XCTAssertEqual(try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlocked, deviceKey: hostA).publicKey,
                       try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil).publicKey)
    }
}
