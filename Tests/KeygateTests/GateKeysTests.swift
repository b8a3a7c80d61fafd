// The presence and current-set keys in the login protector, and keys.json: created at
// initialise, unwrapped by the password alone, carried over (presence) or replaced
// (current-set) on a password change, both replaced on a reset, added to old keychains.
import Foundation
import XCTest
@testable import Keygate

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

    private func sealGated(_ store: KeyStore, _ master: SecureBytes, _ gates: [GateRecipient]) throws -> [UInt8] {
        try GatedBlob.seal(secureBytes("hunter2"), identity: item, accessibility: .whenUnlocked, accessControl: 0,
                           classKey: XCTUnwrap(publicKeys(store).classKey(.whenUnlocked)), gates: gates, combination: .all)
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

    func test_initialize_createsGateKeys_thatUnlockAllReturns_andKeysJSONPublishes() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let unlocked = try store.unlockAll(password: secureBytes("pw"))
        XCTAssertTrue(unlocked.masterKey.constantTimeEquals(master))
        let presence = try XCTUnwrap(unlocked.presence), currentSet = try XCTUnwrap(unlocked.currentSet)
        XCTAssertNotEqual(presence.publicKey, currentSet.publicKey)

        let keys = try publicKeys(store)
        XCTAssertEqual(keys.presenceKey, presence.publicKey)
        XCTAssertEqual(keys.currentSetKey, currentSet.publicKey)
        for accessibility in Accessibility.allCases {
            if accessibility.isThisDeviceOnly {
                XCTAssertNil(keys.classKey(accessibility), "no device key was given")
            } else {
                XCTAssertEqual(keys.classKey(accessibility),
                               try ClassKeys.keyPair(masterKey: master, for: accessibility, deviceKey: nil).publicKey)
            }
        }
        var info = stat()
        XCTAssertEqual(lstat(store.publicKeysPath, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        let login = try json(store.loginPath)
        for field in ["presence", "currentSet"] {
            let entry = try XCTUnwrap(login[field] as? [String: Any], field)
            XCTAssertEqual(Set(entry.keys), ["publicKey", "nonce", "wrapped"])
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.protectorsDirectory).sorted(),
                       ["login.json", "recovery.json"])
    }

    func test_unlockAll_failsAuth_withTheWrongPassword() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        assertThrowsKeychainError(.authFailed) { try store.unlockAll(password: secureBytes("nope")) }
    }

    func test_gateKeys_areNotWrappedByTheMasterKey() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let login = try XCTUnwrap(try store.readProtector(store.loginPath, kind: Protector.Kind.password))
        let wrapped = try XCTUnwrap(login.presence)
        XCTAssertNil(try wrapped.unwrap(kind: .presence, passwordKey: master, masterKeyID: login.masterKeyID, path: store.loginPath))
        let blob = try sealGated(store, master, [GateRecipient(kind: .presence, publicKey: XCTUnwrap(publicKeys(store).presenceKey))])
        let classPair = try ClassKeys.keyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil)
        assertThrowsKeychainError(.decode) { try GatedBlob.open(blob, identity: item, keys: [classPair]) }
        let presence = try XCTUnwrap(try store.unlockAll(password: secureBytes("pw")).presence)
        XCTAssertEqual(try GatedBlob.open(blob, identity: item, keys: [classPair, presence]).unprotectedCopy(), Array("hunter2".utf8))
    }

    func test_changePassword_carriesMasterAndPresence_replacesCurrentSet() throws {
        let store = try makeStore()
        let (master, recoveryKey) = try store.initialize(password: secureBytes("old"), kdf: cost)
        let before = try store.unlockAll(password: secureBytes("old"))
        let keysBefore = try publicKeys(store)
        let presenceBlob = try sealGated(store, master, [GateRecipient(kind: .presence, publicKey: XCTUnwrap(keysBefore.presenceKey))])
        let currentSetBlob = try sealGated(store, master, [GateRecipient(kind: .currentSet, publicKey: XCTUnwrap(keysBefore.currentSetKey))])

        try store.changePassword(old: secureBytes("old"), new: secureBytes("new"), kdf: nil)

        assertThrowsKeychainError(.authFailed) { try store.unlockAll(password: secureBytes("old")) }
        let after = try store.unlockAll(password: secureBytes("new"))
        XCTAssertTrue(after.masterKey.constantTimeEquals(master))
        XCTAssertEqual(after.presence?.publicKey, before.presence?.publicKey)
        let oldCurrentSet = try XCTUnwrap(before.currentSet), newCurrentSet = try XCTUnwrap(after.currentSet)
        XCTAssertNotEqual(newCurrentSet.keyID, oldCurrentSet.keyID)
        XCTAssertEqual(try GatedBlob.header(of: currentSetBlob).gateSlots.first?.keyID, oldCurrentSet.keyID,
                       "the header names the old key, so a reader can tell the item is invalidated")

        let classPair = try ClassKeys.keyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil)
        let presence = try XCTUnwrap(after.presence)
        XCTAssertEqual(try GatedBlob.open(presenceBlob, identity: item, keys: [classPair, presence]).unprotectedCopy(), Array("hunter2".utf8))
        assertThrowsKeychainError(.decode) { try GatedBlob.open(currentSetBlob, identity: self.item, keys: [classPair, presence, newCurrentSet]) }

        let keysAfter = try publicKeys(store)
        XCTAssertEqual(keysAfter.presenceKey, keysBefore.presenceKey)
        XCTAssertEqual(keysAfter.currentSetKey, newCurrentSet.publicKey)
        XCTAssertEqual(try store.loginKDF(), cost, "nil kdf keeps the recorded cost")
        XCTAssertTrue(try store.unlock(recoveryKey: recoveryKey).constantTimeEquals(master))
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

    func test_resetPassword_replacesBothGatePairs_andSaysItemsAreInvalidated() throws {
        let store = try makeStore()
        let (master, recoveryKey) = try store.initialize(password: secureBytes("old"), kdf: cost)
        let before = try store.unlockAll(password: secureBytes("old"))
        let recovered = try store.unlock(recoveryKey: recoveryKey)
        let note = try store.resetPassword(masterKey: recovered, new: secureBytes("new"), kdf: nil)
        XCTAssertTrue(note.contains("invalidated"), note)
        assertThrowsKeychainError(.authFailed) { try store.unlock(password: secureBytes("old")) }
        let after = try store.unlockAll(password: secureBytes("new"))
        XCTAssertTrue(after.masterKey.constantTimeEquals(master))
        XCTAssertNotEqual(try XCTUnwrap(after.presence).keyID, try XCTUnwrap(before.presence).keyID)
        XCTAssertNotEqual(try XCTUnwrap(after.currentSet).keyID, try XCTUnwrap(before.currentSet).keyID)
        let keys = try publicKeys(store)
        XCTAssertEqual(keys.presenceKey, after.presence?.publicKey)
        XCTAssertEqual(keys.currentSetKey, after.currentSet?.publicKey)
        assertThrowsKeychainError(.param) { try store.resetPassword(masterKey: SecureBytes.random(count: 32), new: secureBytes("x"), kdf: nil) }
        XCTAssertNoThrow(try store.unlock(password: secureBytes("new")))
    }

    func test_oldStyleLogin_staysReadable_andEnsureGateKeysAddsThem() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        try writeOldStyleLogin(store, masterKey: master, password: "pw")

        XCTAssertTrue(try store.unlock(password: secureBytes("pw")).constantTimeEquals(master))
        let old = try store.unlockAll(password: secureBytes("pw"))
        XCTAssertNil(old.presence)
        XCTAssertNil(old.currentSet)
        XCTAssertNil(try PublicKeys.load(directory: store.directory))

        assertThrowsKeychainError(.authFailed) { try store.ensureGateKeys(password: secureBytes("wrong"), masterKey: master) }
        assertThrowsKeychainError(.param) { try store.ensureGateKeys(password: secureBytes("pw"), masterKey: SecureBytes.random(count: 32)) }
        try store.ensureGateKeys(password: secureBytes("pw"), masterKey: master)

        let upgraded = try store.unlockAll(password: secureBytes("pw"))
        let presence = try XCTUnwrap(upgraded.presence), currentSet = try XCTUnwrap(upgraded.currentSet)
        let keys = try publicKeys(store)
        XCTAssertEqual(keys.presenceKey, presence.publicKey)
        XCTAssertEqual(keys.currentSetKey, currentSet.publicKey)
        XCTAssertNotNil(keys.classKey(.whenUnlocked))

        let loginBytes = try AtomicFile.read(store.loginPath, maxBytes: 1 << 16)
        try store.ensureGateKeys(password: secureBytes("pw"), masterKey: master)
        XCTAssertEqual(try AtomicFile.read(store.loginPath, maxBytes: 1 << 16), loginBytes, "idempotent: existing keys are kept")
        XCTAssertEqual(try store.unlockAll(password: secureBytes("pw")).presence?.publicKey, presence.publicKey)
    }

    func test_ensureGateKeys_rewritesAMissingOrDamagedKeysJSON() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let expected = try publicKeys(store)
        try AtomicFile.write(Array("{garbage".utf8), to: store.publicKeysPath, mode: 0o600)
        try store.ensureGateKeys(password: secureBytes("pw"), masterKey: master)
        XCTAssertEqual(try publicKeys(store), expected)
        try AtomicFile.remove(store.publicKeysPath)
        try store.ensureGateKeys(password: secureBytes("pw"), masterKey: master)
        XCTAssertEqual(try publicKeys(store), expected)
    }

    func test_recordClassKeys_addsThisDeviceOnlyKeys_onlyWithADeviceKey_andKeepsThem() throws {
        let store = try makeStore()
        let (master, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let device = try SecureBytes.random(count: 32)
        try store.recordClassKeys(masterKey: master, deviceKey: device)
        var keys = try publicKeys(store)
        for accessibility in Accessibility.allCases {
            XCTAssertEqual(keys.classKey(accessibility),
                           try ClassKeys.keyPair(masterKey: master, for: accessibility, deviceKey: device).publicKey, accessibility.rawValue)
        }
        try store.recordClassKeys(masterKey: master, deviceKey: nil)
        keys = try publicKeys(store)
        XCTAssertNotNil(keys.classKey(.whenUnlockedThisDeviceOnly), "an unlock without the device key keeps what is known")
        XCTAssertNotNil(keys.presenceKey, "class keys leave the gate keys alone")
        try store.recordClassKeys(masterKey: master, deviceKey: SecureBytes.random(count: 32))
        XCTAssertNotEqual(try publicKeys(store).classKey(.whenUnlockedThisDeviceOnly), keys.classKey(.whenUnlockedThisDeviceOnly))
        assertThrowsKeychainError(.param) { try store.recordClassKeys(masterKey: SecureBytes.random(count: 32), deviceKey: nil) }
    }
}
