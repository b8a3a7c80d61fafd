// Unit tests for the key cache's pure parts: the payload layout, the parsing of
// keyctl_describe lines, the permission mask, name checks and error advice.
// No kernel keyring is touched here (see KeygateIntegrationTests/KeyCacheTests).
import XCTest
import Glibc
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class KeyCachePayloadTests: XCTestCase {
    private func secure(_ bytes: [UInt8]) throws -> SecureBytes {
        var copy = bytes
        return try SecureBytes(consuming: &copy)
    }

    func test_encode_putsBigEndianExpiryBeforeKeyBytes() throws {
        let payload = try KeyCachePayload.encode(key: try secure([0xAA, 0xBB, 0xCC]), expiresAt: 0x0102_0304_0506_0708)
        XCTAssertEqual(payload.unprotectedCopy(), [1, 2, 3, 4, 5, 6, 7, 8, 0xAA, 0xBB, 0xCC])
    }

    func test_encode_writesZeroExpiry_whenNoTimeout() throws {
        let payload = try KeyCachePayload.encode(key: try secure([9]), expiresAt: nil)
        XCTAssertEqual(payload.unprotectedCopy(), [0, 0, 0, 0, 0, 0, 0, 0, 9])
    }

    func test_decode_returnsSameKeyAndExpiry_asEncoded() throws {
        let key = try SecureBytes.random(count: 32)
        let payload = try KeyCachePayload.encode(key: key, expiresAt: 1_900_000_000)
        let decoded = try XCTUnwrap(payload.withUnsafeBytes { KeyCachePayload.decode($0) })
        XCTAssertTrue(decoded.key.constantTimeEquals(key))
        XCTAssertEqual(decoded.expiresAt, 1_900_000_000)
    }

    func test_decode_mapsZeroExpiryToNil() throws {
        let payload = try KeyCachePayload.encode(key: try secure([1, 2]), expiresAt: nil)
        let decoded = try XCTUnwrap(payload.withUnsafeBytes { KeyCachePayload.decode($0) })
        XCTAssertNil(decoded.expiresAt)
        XCTAssertEqual(decoded.key.unprotectedCopy(), [1, 2])
    }

    func test_decode_acceptsEmptyKey() throws {
        let payload = try KeyCachePayload.encode(key: try SecureBytes(count: 0), expiresAt: 5)
        let decoded = try XCTUnwrap(payload.withUnsafeBytes { KeyCachePayload.decode($0) })
        XCTAssertEqual(decoded.key.count, 0)
        XCTAssertEqual(decoded.expiresAt, 5)
    }

    func test_decode_rejectsPayloadShorterThanHeader() {
        let short: [UInt8] = [0, 0, 0, 0, 0, 0, 1]
        XCTAssertNil(short.withUnsafeBytes { KeyCachePayload.decode($0) })
        XCTAssertNil(short.withUnsafeBytes { KeyCachePayload.header(of: $0) })
    }

    func test_header_readsExpiryWithoutKeyBytes() {
        let raw: [UInt8] = [0, 0, 0, 0, 0x65, 0x00, 0x00, 0x01, 0xFF]
        XCTAssertEqual(raw.withUnsafeBytes { KeyCachePayload.header(of: $0) }, .init(expiresAt: 0x6500_0001))
    }

    func test_keyDescription_parsesKernelLine_withSemicolonsInDescription() throws {
        let parsed = try XCTUnwrap(KeyDescription(parsing: "user;1000;100;3f000000;keygate:1000:a;b"))
        XCTAssertEqual(parsed.type, "user")
        XCTAssertEqual(parsed.uid, 1000)
        XCTAssertEqual(parsed.gid, 100)
        XCTAssertEqual(parsed.permissions, .possessorOnly)
        XCTAssertEqual(parsed.description, "keygate:1000:a;b")
    }

    func test_keyDescription_rejectsMalformedLine() {
        XCTAssertNil(KeyDescription(parsing: "user;1000;3f000000;desc"))
        XCTAssertNil(KeyDescription(parsing: "user;x;0;3f000000;desc"))
        XCTAssertNil(KeyDescription(parsing: "user;0;0;zz;desc"))
    }

    func test_possessorOnly_grantsAllSixPossessorBits_andNothingToUserGroupOther() {
        XCTAssertEqual(KeyPermissions.possessorOnly.rawValue, 0x3F00_0000)
        XCTAssertEqual(KeyPermissions.possessorOnly.rawValue & 0x00FF_FFFF, 0)
    }

    func test_keyCache_namesKeysWithUidPrefix() throws {
        XCTAssertEqual(try KeyCache(uid: 1234).description(of: "master"), "keygate:1234:master")
    }

    func test_keyCache_rejectsEmptyOrNulOrHugeName() {
        let cache = KeyCache(uid: 1)
        XCTAssertThrowsError(try cache.description(of: "")) { XCTAssertEqual(($0 as? KeychainError)?.code, .param) }
        XCTAssertThrowsError(try cache.description(of: "a\u{0}b")) { XCTAssertEqual(($0 as? KeychainError)?.code, .param) }
        XCTAssertThrowsError(try cache.description(of: String(repeating: "x", count: 5000))) {
            XCTAssertEqual(($0 as? KeychainError)?.code, .param)
        }
    }

    func test_cachingFailed_namesQuotaAndAdvice_whenQuotaFull() {
        let error = KeyCache.cachingFailed(KeyringErrno(call: "add_key", code: EDQUOT))
        XCTAssertEqual(error.code, .notAvailable)
        XCTAssertTrue(error.message.contains("quota is full"), error.message)
        XCTAssertTrue(error.message.contains("keygate lock --all"), error.message)
        XCTAssertTrue(error.message.contains("/proc/sys/kernel/keys/maxbytes"), error.message)
    }

    func test_cachingFailed_mentionsSeccomp_whenSyscallBlocked() {
        let error = KeyCache.cachingFailed(KeyringErrno(call: "add_key", code: ENOSYS))
        XCTAssertEqual(error.code, .notAvailable)
        XCTAssertTrue(error.message.contains("seccomp"), error.message)
    }

    func test_keyringErrno_classifiesExpiryApartFromMissing() {
        XCTAssertTrue(KeyringErrno(call: "keyctl_search", code: EKEYEXPIRED).isExpired)
        XCTAssertFalse(KeyringErrno(call: "keyctl_search", code: EKEYEXPIRED).isNoKey)
        XCTAssertTrue(KeyringErrno(call: "keyctl_search", code: ENOKEY).isNoKey)
        XCTAssertTrue(KeyringErrno(call: "keyctl_read_alloc", code: EKEYREVOKED).isRevoked)
    }
}
