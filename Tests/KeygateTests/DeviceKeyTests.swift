// DeviceKey's derivation (pure: no host key file, no keyring): deterministic, bound
// to the uid, the machine-id and the host key, with a known answer computed by an
// independent BLAKE2b (Python's hashlib) so other implementations can match it; and
// the machine-id lookup order over temporary files.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class DeviceKeyTests: XCTestCase {
    private let machineA = "0123456789abcdef0123456789abcdef"
    private let machineB = "fedcba9876543210fedcba9876543210"

    private func hostKey(_ first: UInt8 = 0) throws -> SecureBytes {
        var bytes = (0..<32).map { first &+ UInt8($0) }
        return try SecureBytes(consuming: &bytes)
    }

    private func hex(_ key: SecureBytes) -> String {
        key.unprotectedCopy().map { String(format: "%02x", $0) }.joined()
    }

    func test_derive_matchesIndependentBLAKE2b_knownAnswer() throws {
        // python3: hashlib.blake2b(b"keygate-device-v1" + (1000).to_bytes(4, "big") + mid, key=bytes(range(32)), digest_size=32)
        let key = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineA)
        XCTAssertEqual(hex(key), "d85dc6285e070a425ece6d73aa9cf40c3684a6d20adf2df297a92280d63a3b41")
    }

    func test_derive_isDeterministic_and32Bytes() throws {
        let a = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineA)
        let b = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineA)
        XCTAssertEqual(a.count, 32)
        XCTAssertTrue(a.constantTimeEquals(b))
    }

    func test_derive_differsByUID() throws {
        let a = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineA)
        let b = try DeviceKey.derive(hostKey: hostKey(), uid: 1001, machineID: machineA)
        let root = try DeviceKey.derive(hostKey: hostKey(), uid: 0, machineID: machineA)
        XCTAssertFalse(a.constantTimeEquals(b))
        XCTAssertFalse(a.constantTimeEquals(root))
    }

    func test_derive_differsByMachineID() throws {
        let a = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineA)
        let b = try DeviceKey.derive(hostKey: hostKey(), uid: 1000, machineID: machineB)
        XCTAssertFalse(a.constantTimeEquals(b))
    }

    func test_derive_differsByHostKey() throws {
        let a = try DeviceKey.derive(hostKey: hostKey(0), uid: 1000, machineID: machineA)
        let b = try DeviceKey.derive(hostKey: hostKey(1), uid: 1000, machineID: machineA)
        XCTAssertFalse(a.constantTimeEquals(b))
    }

    func test_derive_rejectsShortHostKey_andMalformedMachineID_withParam() throws {
        var short = [UInt8](repeating: 7, count: 16)
        let shortKey = try SecureBytes(consuming: &short)
        XCTAssertThrowsError(try DeviceKey.derive(hostKey: shortKey, uid: 1, machineID: machineA)) {
            XCTAssertEqual(($0 as? KeychainError)?.code, .param)
        }
        for bad in ["", "uninitialized", String(machineA.dropLast()), machineA.uppercased(), machineA + "0"] {
            XCTAssertThrowsError(try DeviceKey.derive(hostKey: hostKey(), uid: 1, machineID: bad), bad) {
                XCTAssertEqual(($0 as? KeychainError)?.code, .param)
                XCTAssertTrue(($0 as? KeychainError)?.message.contains("machine-id") ?? false)
            }
        }
    }

    func test_machineID_prefersFirstFile_skipsMissingAndUninitialized_thenFails() throws {
        let dir = NSTemporaryDirectory() + "kg-mid-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let etc = dir + "/etc-machine-id", dbus = dir + "/dbus-machine-id", missing = dir + "/missing"
        try (machineB.uppercased() + "\n").write(toFile: dbus, atomically: true, encoding: .utf8)
        try "uninitialized\n".write(toFile: etc, atomically: true, encoding: .utf8)

        XCTAssertEqual(try DeviceKey.machineID(candidates: [missing, etc, dbus]), machineB,
                       "an absent or uninitialized file falls through to the next; hex is lowercased")
        try (machineA + "\n").write(toFile: etc, atomically: true, encoding: .utf8)
        XCTAssertEqual(try DeviceKey.machineID(candidates: [etc, dbus]), machineA)
        XCTAssertThrowsError(try DeviceKey.machineID(candidates: [missing])) {
            XCTAssertEqual(($0 as? KeychainError)?.code, .notAvailable)
            XCTAssertTrue(($0 as? KeychainError)?.message.contains(missing) ?? false)
        }
    }

    func test_unavailableAdvice_tellsRootToSetUpHost_andUsersToEnablePAM() {
        XCTAssertTrue(DeviceKey.unavailableAdvice(uid: 0, environment: .process()).contains("sudo keygate setup-host"))
        XCTAssertTrue(DeviceKey.unavailableAdvice(uid: 1000, environment: .process()).contains("pam_keygate"))
    }
}
