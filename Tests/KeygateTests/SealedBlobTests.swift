// Sealed blobs: round trips, and every way a blob must refuse to open.
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class SealedBlobTests: XCTestCase {
    let item = ItemIdentity.generic(service: "vpn", account: "alice")

    private func classKey() throws -> SecureBytes { try SecureBytes.random(count: 32) }

    func test_seal_thenOpen_returnsTheSecret() throws {
        let key = try classKey()
        let blob = try SealedBlob.seal(secureBytes("hunter2"), identity: item, accessibility: .whenUnlocked, classKey: key)
        let opened = try SealedBlob.open(blob, identity: item, classKey: key)
        XCTAssertEqual(opened.unprotectedCopy(), Array("hunter2".utf8))
    }

    func test_seal_thenOpen_roundTripsAnEmptySecret() throws {
        let key = try classKey()
        let blob = try SealedBlob.seal(SecureBytes(count: 0), identity: item, accessibility: .whenUnlocked, classKey: key)
        XCTAssertEqual(blob.count, SealedBlob.headerLength + 16)
        XCTAssertEqual(try SealedBlob.open(blob, identity: item, classKey: key).count, 0)
    }

    func test_seal_thenOpen_roundTripsBinarySecretsUpToTheMaximum() throws {
        let key = try classKey()
        let everyByte = (0...255).map { UInt8($0) } + [0, 0, 255, 0]
        for bytes in [everyByte, Sodium.randomBytes(SealedBlob.maxSecretLength)] {
            let blob = try SealedBlob.seal(secureBytes(bytes), identity: item, accessibility: .afterFirstUnlock, classKey: key)
            XCTAssertEqual(try SealedBlob.open(blob, identity: item, classKey: key).unprotectedCopy(), bytes)
        }
    }

    func test_seal_usesAFreshNonceEachTime() throws {
        let key = try classKey()
        let a = try SealedBlob.seal(secureBytes("same"), identity: item, accessibility: .whenUnlocked, classKey: key)
        let b = try SealedBlob.seal(secureBytes("same"), identity: item, accessibility: .whenUnlocked, classKey: key)
        XCTAssertNotEqual(a, b)
    }

    func test_open_fails_whenBlobMovedToAnotherItem() throws {
        let key = try classKey()
        let blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: key)
        let others = [ItemIdentity.generic(service: "vpn", account: "bob"),
                      ItemIdentity.generic(service: "vpn2", account: "alice"),
                      ItemIdentity.internet(server: "vpn", account: "alice")]
        for other in others {
            let error = assertThrowsKeychainError(.decode) { try SealedBlob.open(blob, identity: other, classKey: key) }
            XCTAssertTrue(error?.message.contains("moved from another item") ?? false, error?.message ?? "")
        }
    }

    func test_open_fails_whenAnyByteIsFlipped() throws {
        let key = try classKey()
        let blob = try SealedBlob.seal(secureBytes("secret value"), identity: item, accessibility: .whenUnlocked, classKey: key)
        for index in blob.indices {
            var damaged = blob
            damaged[index] ^= 0x01
            assertThrowsKeychainError(.decode) { try SealedBlob.open(damaged, identity: item, classKey: key) }
        }
    }

    func test_open_fails_whenAccessibilityByteIsChangedToAnotherValidClass() throws {
        let key = try classKey()
        var blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: key)
        blob[5] = Accessibility.afterFirstUnlock.blobCode  // the header is authenticated too
        assertThrowsKeychainError(.decode) { try SealedBlob.open(blob, identity: item, classKey: key) }
    }

    func test_open_fails_whenTruncated() throws {
        let key = try classKey()
        let blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: key)
        for length in [0, 2, 3, 10, SealedBlob.headerLength, blob.count - 1] {
            assertThrowsKeychainError(.decode) { try SealedBlob.open(Array(blob.prefix(length)), identity: item, classKey: key) }
        }
    }

    func test_open_fails_whenClassKeyDiffers() throws {
        let blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: classKey())
        let error = assertThrowsKeychainError(.decode) { try SealedBlob.open(blob, identity: item, classKey: classKey()) }
        XCTAssertTrue(error?.message.contains("sealed by another keychain") ?? false, error?.message ?? "")
    }

    func test_open_failsWithUpgradeAdvice_whenVersionIsNewer() throws {
        let key = try classKey()
        var blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: .whenUnlocked, classKey: key)
        blob[3] = SealedBlob.currentVersion + 1
        let error = assertThrowsKeychainError(.decode) { try SealedBlob.open(blob, identity: item, classKey: key) }
        XCTAssertTrue(error?.message.contains("newer Keygate (format 2") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("upgrade keygate") ?? false, error?.message ?? "")
    }

    func test_open_failsAsForeign_whenBlobIsNotKeygates() throws {
        for foreign in [Array("hunter2".utf8), [], Sodium.randomBytes(100)] {
            let error = assertThrowsKeychainError(.decode) { try SealedBlob.open(foreign, identity: item, classKey: classKey()) }
            XCTAssertTrue(error?.message.contains("not a Keygate blob") ?? false, error?.message ?? "")
        }
    }

    func test_header_reportsVersionSchemeAndAccessibility() throws {
        let key = try classKey()
        for accessibility in Accessibility.allCases {
            let blob = try SealedBlob.seal(secureBytes("s"), identity: item, accessibility: accessibility, classKey: key)
            XCTAssertEqual(Array(blob.prefix(3)), Array("KGS".utf8))
            XCTAssertEqual(try SealedBlob.header(of: blob),
                           SealedBlob.Header(version: 1, scheme: SealedBlob.schemeClassKey, accessibility: accessibility))
        }
    }

    func test_seal_throwsParam_whenSecretIsOversize() throws {
        let error = assertThrowsKeychainError(.param) {
            try SealedBlob.seal(SecureBytes(count: SealedBlob.maxSecretLength + 1), identity: item,
                                accessibility: .whenUnlocked, classKey: classKey())
        }
        XCTAssertTrue(error?.message.contains("at most \(SealedBlob.maxSecretLength) bytes") ?? false, error?.message ?? "")
    }
}
