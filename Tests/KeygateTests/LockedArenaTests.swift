// Small secrets in shared locked chunks (Crypto/LockedArena.swift): each slot is its own,
// zeroed when given and when given back, and larger buffers keep their own allocation.
import XCTest
@testable import KeygateCore

final class LockedArenaTests: XCTestCase {
    func test_slotsAreDistinct_zeroed_andReusedOnlyAfterRelease() throws {
        // More than one chunk's worth, all alive at once.
        var held: [SecureBytes] = []
        for index in 0..<(LockedArena.slotsPerChunk + 10) {
            let secret = try SecureBytes(count: 32)
            XCTAssertEqual(secret.unprotectedCopy(), [UInt8](repeating: 0, count: 32), "a new secret starts zeroed")
            secret.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(index), as: UInt32.self) }
            held.append(secret)
        }
        for (index, secret) in held.enumerated() {
            XCTAssertEqual(secret.withUnsafeBytes { $0.load(as: UInt32.self) }, UInt32(index), "no slot is shared")
        }
        // Written full, given back: the slot comes back zeroed.
        var filled: SecureBytes? = try secureBytes([UInt8](repeating: 0xAB, count: LockedArena.slotBytes))
        filled = nil
        XCTAssertNil(filled)
        for _ in 0..<8 {
            let again = try SecureBytes(count: LockedArena.slotBytes)
            XCTAssertEqual(again.unprotectedCopy(), [UInt8](repeating: 0, count: LockedArena.slotBytes))
        }
        XCTAssertNil(LockedArena.allocate(LockedArena.slotBytes + 1), "larger secrets get their own allocation")
        let large = try SecureBytes(count: 4096)
        XCTAssertEqual(large.count, 4096)
    }
}
