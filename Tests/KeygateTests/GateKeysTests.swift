// What the login protector and keys.json hold since the gatekeeper (docs/GATEKEEPER.md):
// no gate keys in a new keychain; class public keys with the gatekeeper's seals; Keygate
// 1.x's wrapped gate keys still read (for the migration), kept across a password change
// until migrated, and removed afterwards.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateGateWire
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class GateKeysTests: XCTestCase {
    let cost = KDFParameters.testing
    let item = ItemIdentity.generic(service: "vpn", account: "alice")

    private func makeStore() throws -> KeyStore {
        KeyStore(directory: try makeTemporaryFolder(self) + "/share/keygate")
    }

    private func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func publicKeys(_ store: KeyStore) throws -> PublicKeys {
        try XCTUnwrap(try PublicKeys.load(directory: store.directory))
    }

    /// A login protector as Keygate 1.x wrote it: the master key and wrapped presence and current-set pairs.
    private func writeLegacyLogin(_ store: KeyStore, masterKey: SecureBytes, password: String) throws -> (BoxKeyPair, BoxKeyPair) {
        let presence = try BoxKeyPair.generate(), currentSet = try BoxKeyPair.generate()
        let login = try store.passwordProtector(masterKey: masterKey, password: secureBytes(password), kdf: cost,
                                                presence: presence, currentSet: currentSet)
        try AtomicFile.write(login.encoded(), to: store.loginPath, mode: 0o600)
        var keys = try publicKeys(store)
        keys.presence = PublicKeys.encodeKey(presence.publicKey)
        keys.currentSet = PublicKeys.encodeKey(currentSet.publicKey)
        try keys.save(directory: store.directory)
        return (presence, currentSet)
    }

    /// A login protector as Keygate wrote it before gate keys existed (no presence/currentSet fields).
    private func writeOldStyleLogin(_ store: KeyStore, masterKey: SecureBytes, password: String) throws {
        let salt = Sodium.randomBytes(KDFParameters.saltBytes)
        let wrappingKey = try cost.deriveKey(password: secureBytes(password), salt: salt)
        let login = try Protector.wrap(masterKey: masterKey, kind: Protector.Kind.password, wrappingKey: wrappingKey, salt: salt, kdf: cost)
        try AtomicFile.write(login.encoded(), to: store.loginPath, mode: 0o600)
        try AtomicFile.remove(store.publicKeysPath)
        let object = try json(store.loginPath)
        XCTAssertNil(object["presence"])
        XCTAssertNil(object["currentSet"])
    }

    func test_initialize_wrapsNoGateKey_andPublishesEveryClassKeyUnsealed() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let unlocked = try store.unlockAll(password: secureBytes("pw"))
        XCTAssertTrue(unlocked.masterKey.constantTimeEquals(master))
        XCTAssertNil(unlocked.presence, "the gates are the gatekeeper's")
        XCTAssertNil(unlocked.currentSet)
        XCTAssertFalse(store.hasLegacyGateKeys)
        let keys = try publicKeys(store)
        XCTAssertNil(keys.presenceKey)
        XCTAssertNil(keys.currentSetKey)
        for accessibility in Accessibility.allCases {
            XCTAssertEqual(keys.classKey(accessibility), try ClassKeys.keyPair(masterKey: master, for: accessibility).publicKey,
                           "every class, this-device-only ones too: the device gate is a slot of its own")
            XCTAssertTrue(keys.seal(accessibility).isEmpty, "sealed only by the gatekeeper")
        }
        var info = stat()
        XCTAssertEqual(lstat(store.publicKeysPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let login = try json(store.loginPath)
        XCTAssertNil(login["presence"])
        XCTAssertNil(login["currentSet"])
    }

    func test_unlockAll_failsAuth_withTheWrongPassword() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        assertThrowsKeychainError(.authFailed) { try store.unlockAll(password: secureBytes("nope")) }
    }

    func test_a1xLogin_staysReadable_keepsPresenceAcrossAChange_andLosesItsGateKeysOnceMigrated() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("old"), kdf: cost)
        let (presence, currentSet) = try writeLegacyLogin(store, masterKey: master, password: "old")
        XCTAssertTrue(store.hasLegacyGateKeys)
        let before = try store.unlockAll(password: secureBytes("old"))
        XCTAssertEqual(before.presence?.publicKey, presence.publicKey)
        XCTAssertEqual(before.currentSet?.publicKey, currentSet.publicKey)

        try store.changePassword(old: secureBytes("old"), new: secureBytes("new"), kdf: nil)
        let after = try store.unlockAll(password: secureBytes("new"))
        XCTAssertTrue(after.masterKey.constantTimeEquals(master))
        XCTAssertEqual(after.presence?.publicKey, presence.publicKey, "kept, so 1.x presence items can still migrate")
        XCTAssertNotEqual(try XCTUnwrap(after.currentSet).keyID, currentSet.keyID, "1.x current-set items die with the change")

        try store.removeLegacyGateKeys()
        XCTAssertFalse(store.hasLegacyGateKeys)
        let migrated = try store.unlockAll(password: secureBytes("new"))
        XCTAssertNil(migrated.presence)
        XCTAssertNil(migrated.currentSet)
        XCTAssertNil(try publicKeys(store).presence)
        XCTAssertNil(try publicKeys(store).currentSet)
        XCTAssertTrue(try store.unlock(password: secureBytes("new")).constantTimeEquals(master))
    }

    func test_changePassword_failsAuth_withTheWrongOldPassword_andChangesNothing() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("old"), kdf: cost)
        let loginBefore = try AtomicFile.read(store.loginPath, maxBytes: 1 << 16)
        let keysBefore = try AtomicFile.read(store.publicKeysPath, maxBytes: 1 << 16)
        assertThrowsKeychainError(.authFailed) { try store.changePassword(old: secureBytes("wrong"), new: secureBytes("new"), kdf: nil) }
        XCTAssertEqual(try AtomicFile.read(store.loginPath, maxBytes: 1 << 16), loginBefore)
        XCTAssertEqual(try AtomicFile.read(store.publicKeysPath, maxBytes: 1 << 16), keysBefore)
    }

    func test_resetPassword_keepsTheMasterKey_andSaysPresenceItemsKeepWorking() throws {
        let store = try makeStore()
        let (master, recoveryKey) = try store.initialize(password: secureBytes("old"), kdf: cost)
        let recovered = try store.unlock(recoveryKey: recoveryKey)
        let note = try store.resetPassword(masterKey: recovered, new: secureBytes("new"), kdf: nil)
        XCTAssertTrue(note.contains("user presence keep working"), note)
        assertThrowsKeychainError(.authFailed) { try store.unlock(password: secureBytes("old")) }
        XCTAssertTrue(try store.unlock(password: secureBytes("new")).constantTimeEquals(master))
        assertThrowsKeychainError(.param) { try store.resetPassword(masterKey: SecureBytes.random(count: 32), new: secureBytes("x"), kdf: nil) }
    }

    func test_resetPassword_of_a1xKeychain_saysItsUnmigratedGatedItemsAreLost() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("old"), kdf: cost)
        _ = try writeLegacyLogin(store, masterKey: master, password: "old")
        let note = try store.resetPassword(masterKey: master, new: secureBytes("new"), kdf: nil)
        XCTAssertTrue(note.contains("invalidated"), note)
        XCTAssertFalse(store.hasLegacyGateKeys)
    }

    func test_recordClassKeys_keepsSeals_andDropsOneWhoseKeyChanged() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let seal = [UInt8](repeating: 9, count: GateRequest.sealBytes)
        try store.recordClassKeys(masterKey: master, seals: [.whenUnlocked: seal])
        XCTAssertEqual(try publicKeys(store).seal(.whenUnlocked), seal)
        try store.recordClassKeys(masterKey: master, seals: [:])
        XCTAssertEqual(try publicKeys(store).seal(.whenUnlocked), seal, "an unlock without seals keeps the recorded ones")
        var keys = try publicKeys(store)
        keys.classKeys[Accessibility.whenUnlocked.rawValue] = PublicKeys.encodeKey(try BoxKeyPair.generate().publicKey)
        try keys.save(directory: store.directory)
        try store.recordClassKeys(masterKey: master, seals: [:])
        XCTAssertTrue(try publicKeys(store).seal(.whenUnlocked).isEmpty, "a replaced key loses the seal it carried")
        assertThrowsKeychainError(.param) { try store.recordClassKeys(masterKey: SecureBytes.random(count: 32), seals: [:]) }
    }
}
