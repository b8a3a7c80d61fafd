// The key store: initialise, unlock by password or recovery key, re-wrap on password
// change, and clear refusals for duplicate, corrupt, future and missing protectors.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class KeyStoreTests: XCTestCase {
    let cost = KDFParameters.testing

    private func makeStore() throws -> KeyStore {
        KeyStore(directory: try makeTemporaryFolder(self) + "/share/keygate")
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, path)
        return info.st_mode & 0o777
    }

    private func json(_ path: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    func test_initialize_thenUnlockWithPassword_returnsTheSameMasterKey() throws {
        let store = try makeStore()
        XCTAssertFalse(store.isInitialized)
        let (masterKey, recoveryKey) = try store.initialize(password: secureBytes("pw one"), kdf: cost)
        XCTAssertTrue(store.isInitialized)
        XCTAssertEqual(masterKey.count, 32)
        XCTAssertEqual(recoveryKey.count, 32)
        XCTAssertTrue(try store.unlock(password: secureBytes("pw one")).constantTimeEquals(masterKey))
        XCTAssertEqual(try store.loginKDF(), cost)
    }

    func test_initialize_writesPrivateFilesInTheDocumentedFormat() throws {
        let store = try makeStore()
        let (masterKey, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        XCTAssertEqual(mode(store.protectorsDirectory), 0o700)
        XCTAssertEqual(mode(store.directory), 0o700)
        XCTAssertEqual(mode(store.loginPath), 0o600)
        XCTAssertEqual(mode(store.recoveryPath), 0o600)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.protectorsDirectory).sorted(),
                       ["login.json", "recovery.json"])
        let login = try json(store.loginPath), recovery = try json(store.recoveryPath)
        XCTAssertEqual(login["version"] as? Int, 1)
        XCTAssertEqual(login["kind"] as? String, "password")
        XCTAssertEqual(recovery["kind"] as? String, "recovery")
        XCTAssertNotNil(login["kdf"])
        XCTAssertNil(recovery["kdf"])
        let id = try Protector.masterKeyID(of: masterKey)
        XCTAssertEqual(login["masterKeyID"] as? String, id)
        XCTAssertEqual(recovery["masterKeyID"] as? String, id)
        let masterHex = masterKey.unprotectedCopy().map { String(format: "%02x", $0) }.joined()
        XCTAssertFalse(id.contains(masterHex.prefix(8)))
        for key in ["salt", "nonce", "wrapped"] {
            XCTAssertNotNil(Data(base64Encoded: try XCTUnwrap(login[key] as? String)), key)
        }
    }

    /// A login reads login.json once: root checks the cost it records, and the unlock derives
    /// with that protector, not with a file swapped in after the check (here one asking for
    /// 64 passes over 1 GiB, which a second read would derive with, or refuse as damaged).
    func test_unlockWithALoginReadEarlier_derivesWithItsCost_notTheFileNow() throws {
        let store = try makeStore()
        let (masterKey, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let read = try XCTUnwrap(try store.loginProtector())
        XCTAssertEqual(read.passes, cost.opsLimit)
        XCTAssertEqual(read.memoryBytes, cost.memLimitBytes)
        var swapped = try json(store.loginPath)
        var kdf = try XCTUnwrap(swapped["kdf"] as? [String: Any])
        kdf["opsLimit"] = 64
        kdf["memLimitBytes"] = 1 << 30
        swapped["kdf"] = kdf
        try JSONSerialization.data(withJSONObject: swapped).write(to: URL(fileURLWithPath: store.loginPath))
        XCTAssertEqual(try store.loginProtector()?.passes, 64, "the file now asks for more")
        let start = Date()
        XCTAssertTrue(try store.unlock(password: secureBytes("pw"), login: read.protector).constantTimeEquals(masterKey))
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "derived at the cost read first, not 64 passes over 1 GiB")
    }

    func test_unlock_failsAuth_withTheWrongPassword() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("right"), kdf: cost)
        let error = assertThrowsKeychainError(.authFailed) { try store.unlock(password: secureBytes("wrong")) }
        XCTAssertTrue(error?.message.contains("keygate passwd") ?? false, error?.message ?? "")
        XCTAssertTrue(error?.message.contains("keygate unlock --recovery") ?? false, error?.message ?? "")
    }

    func test_unlockWithRecoveryKey_works_afterFormatAndParse() throws {
        let store = try makeStore()
        let (masterKey, recoveryKey) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let typed = try RecoveryKey.parse(RecoveryKey.format(recoveryKey))
        XCTAssertTrue(try store.unlock(recoveryKey: typed).constantTimeEquals(masterKey))
        assertThrowsKeychainError(.authFailed) { try store.unlock(recoveryKey: RecoveryKey.generate()) }
    }

    func test_rewrapLogin_newPasswordWorks_oldFails_recoveryStillWorks() throws {
        let store = try makeStore()
        let (masterKey, recoveryKey) = try store.initialize(password: secureBytes("old"), kdf: cost)
        try store.rewrapLogin(masterKey: masterKey, newPassword: secureBytes("new"), kdf: nil)
        assertThrowsKeychainError(.authFailed) { try store.unlock(password: secureBytes("old")) }
        XCTAssertTrue(try store.unlock(password: secureBytes("new")).constantTimeEquals(masterKey))
        XCTAssertTrue(try store.unlock(recoveryKey: recoveryKey).constantTimeEquals(masterKey))
        XCTAssertEqual(try store.loginKDF(), cost, "nil kdf keeps the recorded cost")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: store.protectorsDirectory).sorted(),
                       ["login.json", "recovery.json"], "no temporary file left behind")
    }

    func test_rewrapLogin_recordsANewCost_whenGivenOne() throws {
        let store = try makeStore()
        let (masterKey, _) = try store.initialize(password: secureBytes("old"), kdf: cost)
        var newCost = cost
        newCost.opsLimit = 2
        try store.rewrapLogin(masterKey: masterKey, newPassword: secureBytes("new"), kdf: newCost)
        XCTAssertEqual(try store.loginKDF(), newCost)
        XCTAssertTrue(try store.unlock(password: secureBytes("new")).constantTimeEquals(masterKey))
    }

    func test_rewrapLogin_throwsParam_forAnotherKeychainsMasterKey() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        assertThrowsKeychainError(.param) {
            try store.rewrapLogin(masterKey: SecureBytes.random(count: 32), newPassword: secureBytes("new"), kdf: nil)
        }
        XCTAssertNoThrow(try store.unlock(password: secureBytes("pw")))
    }

    func test_rewrapLogin_replacesACorruptLoginProtector_afterRecovery() throws {
        let store = try makeStore()
        let (_, recoveryKey) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        try AtomicFile.write(Array("{garbage".utf8), to: store.loginPath, mode: 0o600)
        let masterKey = try store.unlock(recoveryKey: recoveryKey)
        try store.rewrapLogin(masterKey: masterKey, newPassword: secureBytes("fresh"), kdf: cost)
        XCTAssertTrue(try store.unlock(password: secureBytes("fresh")).constantTimeEquals(masterKey))
    }

    func test_initialize_twice_throwsDuplicate_andKeepsTheFirstKey() throws {
        let store = try makeStore()
        let (masterKey, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let error = assertThrowsKeychainError(.duplicateItem) { try store.initialize(password: secureBytes("other"), kdf: self.cost) }
        XCTAssertTrue(error?.message.contains("already initialised") ?? false, error?.message ?? "")
        XCTAssertTrue(try store.unlock(password: secureBytes("pw")).constantTimeEquals(masterKey))
    }

    func test_unlock_throwsNotAvailable_whenNotInitialised() throws {
        let store = try makeStore()
        let error = assertThrowsKeychainError(.notAvailable) { try store.unlock(password: secureBytes("pw")) }
        XCTAssertTrue(error?.message.contains("keygate init") ?? false, error?.message ?? "")
        assertThrowsKeychainError(.notAvailable) { try store.unlock(recoveryKey: RecoveryKey.generate()) }
        XCTAssertNil(try store.loginKDF())
    }

    func test_unlock_throwsDecodeNamingTheFile_whenTheProtectorIsCorrupt() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let original = try XCTUnwrap(try AtomicFile.read(store.loginPath, maxBytes: 1 << 16))
        for damaged in [Array(original.prefix(original.count / 2)), [], Array("not json at all".utf8),
                        Array(#"{"version":1,"kind":"password"}"#.utf8)] {
            try AtomicFile.write(damaged, to: store.loginPath, mode: 0o600)
            let error = assertThrowsKeychainError(.decode) { try store.unlock(password: secureBytes("pw")) }
            XCTAssertTrue(error?.message.contains(store.loginPath) ?? false, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("keygate unlock --recovery") ?? false, error?.message ?? "")
        }
    }

    func test_unlock_throwsDecodeWithUpgradeAdvice_forAFutureProtectorVersion() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        var object = try json(store.loginPath)
        object["version"] = 7
        try AtomicFile.write(Array(try JSONSerialization.data(withJSONObject: object)), to: store.loginPath, mode: 0o600)
        let error = assertThrowsKeychainError(.decode) { try store.unlock(password: secureBytes("pw")) }
        XCTAssertTrue(error?.message.contains("newer Keygate (protector format 7") ?? false, error?.message ?? "")
    }

    func test_unlock_failsAuth_whenTheWrappedKeyIsTampered() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        var object = try json(store.loginPath)
        object["masterKeyID"] = String(repeating: "0", count: 32)  // part of the associated data
        try AtomicFile.write(Array(try JSONSerialization.data(withJSONObject: object)), to: store.loginPath, mode: 0o600)
        assertThrowsKeychainError(.authFailed) { try store.unlock(password: secureBytes("pw")) }
    }

    func test_unlock_refusesASymlinkedOrOversizeProtector() throws {
        let store = try makeStore()
        _ = try store.initialize(password: secureBytes("pw"), kdf: cost)
        let elsewhere = store.directory + "/elsewhere.json"
        XCTAssertEqual(rename(store.loginPath, elsewhere), 0)
        XCTAssertEqual(symlink(elsewhere, store.loginPath), 0)
        assertThrowsKeychainError(.notAvailable) { try store.unlock(password: secureBytes("pw")) }
        XCTAssertEqual(unlink(store.loginPath), 0)
        try AtomicFile.write(Array(repeating: 32, count: KeyStore.maxProtectorBytes + 1), to: store.loginPath, mode: 0o600)
        let error = assertThrowsKeychainError(.decode) { try store.unlock(password: secureBytes("pw")) }
        XCTAssertTrue(error?.message.contains(store.loginPath) ?? false, error?.message ?? "")
    }

    func test_unknownProtectorKinds_areIgnored() throws {
        let store = try makeStore()
        let (masterKey, _) = try store.initialize(password: secureBytes("pw"), kdf: cost)
        try AtomicFile.write(Array(#"{"version":1,"kind":"tpm2","handle":"0x81000001"}"#.utf8),
                             to: store.protectorsDirectory + "/tpm2.json", mode: 0o600)
        XCTAssertTrue(try store.unlock(password: secureBytes("pw")).constantTimeEquals(masterKey))
    }

    func test_dataDirectory_followsXDGDataHome_thenHome_thenPasswordDatabase() throws {
        XCTAssertEqual(KeygatePaths.dataDirectory(home: "/h", environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]), "/x/keygate")
        XCTAssertEqual(KeygatePaths.dataDirectory(home: "/h", environment: ["XDG_DATA_HOME": "rel"]), "/h/.local/share/keygate")
        let uid = getuid()
        let database = try UserAccount.lookup(uid: uid).home
        XCTAssertEqual(try KeygatePaths.home(environment: ["HOME": "/h"], uid: uid), "/h")
        XCTAssertEqual(try KeygatePaths.home(environment: ["HOME": "relative"], uid: uid), database, "a relative HOME is not used")
        XCTAssertEqual(try KeygatePaths.home(environment: [:], uid: uid), database)
        XCTAssertNotEqual(database, "/h")
        // A uid the database does not know has a home only through HOME.
        let unknown: UInt32 = 0xFFFF_FFF0
        XCTAssertNil(try? UserAccount.lookup(uid: unknown))
        XCTAssertEqual(try KeygatePaths.home(environment: ["HOME": "/h"], uid: unknown), "/h")
        XCTAssertThrowsError(try KeygatePaths.home(environment: [:], uid: unknown))
    }
}
