// Known-answer vectors for every on-disk format Keygate 1.x writes, the release whose gate
// keys live in the user's own files, not the gatekeeper's: a keychain folder made by it
// with fixed credentials (protectors/login.json with its password and the presence and
// current-set keys, recovery.json, host.json, keys.json) and sealed blobs of scheme 1 and
// scheme 2 (or, and, this-device-only) made with its keys. The files in FormatVectors/
// were written once by `test_writeVectors` and are never regenerated: a later Keygate
// must still open every one of them, or a keychain made today loses data on upgrade.
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class FormatVectorTests: XCTestCase {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path + "/FormatVectors"

    /// The fixed inputs; vectors.json holds what they produced.
    static let password = "correct horse battery staple"
    static let hostProtectorKey = [UInt8](repeating: 0x42, count: 32)
    static let deviceKey = [UInt8](0..<32)
    static let secret = "hunter2 \u{1F511} frozen"
    static let identity = ItemIdentity.generic(service: "vpn", account: "alice")
    static let internetIdentity = ItemIdentity.internet(server: "git.example.org", account: "bob",
                                                        protocol: .https, port: 443, path: "/repo",
                                                        authenticationType: .httpBasic)
    /// Argon2id at its smallest accepted cost for a new protector (ops 2, 64 MiB).
    static let kdf = KDFParameters(opsLimit: KDFParameters.minimumOps, memLimitBytes: KDFParameters.minimumMemory)

    struct Vectors: Codable {
        var masterKey: String            // hex
        var recoveryKey: String          // as shown to the user
        var presencePublicKey: String    // hex
        var currentSetPublicKey: String  // hex
        var blobs: [String: String]      // name -> hex
    }

    // MARK: - The frozen vectors open

    func test_loginProtector_opensWithItsPassword_andYieldsTheFrozenMasterAndGateKeys() throws {
        let (store, vectors) = try loadKeychain()
        let unlocked = try store.unlockAll(password: secureBytes(Self.password))
        XCTAssertEqual(hex(unlocked.masterKey), vectors.masterKey)
        XCTAssertEqual(try unlocked.presence.map { hex($0.publicKey) }, vectors.presencePublicKey)
        XCTAssertEqual(try unlocked.currentSet.map { hex($0.publicKey) }, vectors.currentSetPublicKey)
        XCTAssertThrowsError(try store.unlock(password: secureBytes("Correct horse battery staple")))
    }

    func test_recoveryProtector_opensWithTheFrozenRecoveryKey() throws {
        let (store, vectors) = try loadKeychain()
        let key = try RecoveryKey.parse(secureBytes(vectors.recoveryKey))
        XCTAssertEqual(hex(try store.unlock(recoveryKey: key)), vectors.masterKey)
    }

    func test_hostProtector_opensWithTheFrozenHostProtectorKey() throws {
        let (store, vectors) = try loadKeychain()
        XCTAssertEqual(hex(try store.unlock(hostProtectorKey: secureBytes(Self.hostProtectorKey))), vectors.masterKey)
        var wrong = Self.hostProtectorKey
        wrong[0] ^= 1
        XCTAssertThrowsError(try store.unlock(hostProtectorKey: secureBytes(wrong)))
    }

    func test_publicKeys_file_matchesTheKeysThePasswordUnwraps() throws {
        let (store, vectors) = try loadKeychain()
        let keys = try XCTUnwrap(try PublicKeys.load(directory: store.directory))
        XCTAssertEqual(keys.presenceKey.map(hex), vectors.presencePublicKey)
        XCTAssertEqual(keys.currentSetKey.map(hex), vectors.currentSetPublicKey)
        let master = try secureBytes(unhex(vectors.masterKey))
        for accessibility in [Accessibility.whenUnlocked, .afterFirstUnlock] {
            let pair = try ClassKeys.legacyKeyPair(masterKey: master, for: accessibility, deviceKey: nil)
            XCTAssertEqual(keys.classKey(accessibility).map(hex), hex(pair.publicKey), accessibility.rawValue)
        }
    }

    func test_scheme1Blobs_openWithTheClassKey() throws {
        let (_, vectors) = try loadKeychain()
        let master = try secureBytes(unhex(vectors.masterKey))
        for (name, identity, accessibility) in [("scheme1-when-unlocked", Self.identity, Accessibility.whenUnlocked),
                                                ("scheme1-after-first-unlock-internet", Self.internetIdentity, .afterFirstUnlock)] {
            let blob = try unhex(XCTUnwrap(vectors.blobs[name], name))
            XCTAssertEqual(try SealedBlob.header(of: blob).accessibility, accessibility, name)
            let key = try ClassKeys.derive(masterKey: master, for: accessibility)
            XCTAssertEqual(text(try SealedBlob.open(blob, identity: identity, classKey: key)), Self.secret, name)
            let other = ItemIdentity.generic(service: "vpn", account: "mallory")
            XCTAssertThrowsError(try SealedBlob.open(blob, identity: other, classKey: key), "\(name) opened as another item")
        }
    }

    func test_scheme2Or_opensWithEitherGate_andNotWithoutOne() throws {
        let (store, vectors) = try loadKeychain()
        let unlocked = try store.unlockAll(password: secureBytes(Self.password))
        let classPair = try ClassKeys.legacyKeyPair(masterKey: unlocked.masterKey, for: .whenUnlocked, deviceKey: nil)
        let blob = try unhex(XCTUnwrap(vectors.blobs["scheme2-or-presence-current-set"]))
        let header = try GatedBlob.header(of: blob)
        XCTAssertEqual(header.combination, .any)
        XCTAssertEqual(header.gateSlots.map(\.kind), [.presence, .currentSet])
        XCTAssertEqual(header.accessControl, 1 << 0 | 1 << 3 | 1 << 14)
        for gate in [unlocked.presence, unlocked.currentSet] {
            let opened = try GatedBlob.open(blob, identity: Self.identity, keys: [classPair, XCTUnwrap(gate)])
            XCTAssertEqual(text(opened), Self.secret)
        }
        XCTAssertThrowsError(try GatedBlob.open(blob, identity: Self.identity, keys: [classPair]))
    }

    func test_scheme2And_needsEveryGate() throws {
        let (store, vectors) = try loadKeychain()
        let unlocked = try store.unlockAll(password: secureBytes(Self.password))
        let classPair = try ClassKeys.legacyKeyPair(masterKey: unlocked.masterKey, for: .whenUnlocked, deviceKey: nil)
        let presence = try XCTUnwrap(unlocked.presence), currentSet = try XCTUnwrap(unlocked.currentSet)
        let blob = try unhex(XCTUnwrap(vectors.blobs["scheme2-and-presence-current-set"]))
        XCTAssertEqual(try GatedBlob.header(of: blob).combination, .all)
        XCTAssertEqual(text(try GatedBlob.open(blob, identity: Self.identity, keys: [classPair, presence, currentSet])), Self.secret)
        XCTAssertThrowsError(try GatedBlob.open(blob, identity: Self.identity, keys: [classPair, presence]))
        XCTAssertThrowsError(try GatedBlob.open(blob, identity: Self.identity, keys: [classPair, currentSet]))
    }

    func test_scheme2ThisDeviceOnly_opensOnlyWithTheFrozenDeviceKey() throws {
        let (store, vectors) = try loadKeychain()
        let unlocked = try store.unlockAll(password: secureBytes(Self.password))
        let presence = try XCTUnwrap(unlocked.presence)
        let blob = try unhex(XCTUnwrap(vectors.blobs["scheme2-presence-when-unlocked-this-device-only"]))
        XCTAssertEqual(try GatedBlob.header(of: blob).accessibility, .whenUnlockedThisDeviceOnly)
        let right = try ClassKeys.legacyKeyPair(masterKey: unlocked.masterKey, for: .whenUnlockedThisDeviceOnly,
                                          deviceKey: secureBytes(Self.deviceKey))
        XCTAssertEqual(text(try GatedBlob.open(blob, identity: Self.identity, keys: [right, presence])), Self.secret)
        let otherHost = try ClassKeys.legacyKeyPair(masterKey: unlocked.masterKey, for: .whenUnlockedThisDeviceOnly,
                                              deviceKey: secureBytes([UInt8](repeating: 7, count: 32)))
        XCTAssertThrowsError(try GatedBlob.open(blob, identity: Self.identity, keys: [otherHost, presence]))
    }

    // MARK: - Writing them (once)

    /// Writes FormatVectors/ from this build. Run only on purpose, never to "fix" a failing vector:
    ///   KEYGATE_WRITE_FORMAT_VECTORS=1 swift test --filter FormatVectorTests/test_writeVectors
    func test_writeVectors() throws {
        guard ProcessInfo.processInfo.environment["KEYGATE_WRITE_FORMAT_VECTORS"] == "1" else {
            XCTAssertTrue(FileManager.default.fileExists(atPath: Self.folder + "/vectors.json"),
                          "the frozen vectors are missing from \(Self.folder)")
            return
        }
        let fm = FileManager.default
        try? fm.removeItem(atPath: Self.folder)
        let store = KeyStore(directory: Self.folder + "/keychain")
        let (master, recoveryKey) = try store.initialize(password: secureBytes(Self.password), kdf: Self.kdf)
        try store.writeHostProtector(masterKey: master, hostProtectorKey: secureBytes(Self.hostProtectorKey))
        let unlocked = try store.unlockAll(password: secureBytes(Self.password))
        let presence = try XCTUnwrap(unlocked.presence), currentSet = try XCTUnwrap(unlocked.currentSet)
        let secret = try secureBytes(Self.secret)
        let classPair = try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlocked, deviceKey: nil)
        let devicePair = try ClassKeys.legacyKeyPair(masterKey: master, for: .whenUnlockedThisDeviceOnly,
                                               deviceKey: secureBytes(Self.deviceKey))
        let gates = [GateRecipient(kind: .presence, publicKey: presence.publicKey),
                     GateRecipient(kind: .currentSet, publicKey: currentSet.publicKey)]
        let blobs: [String: [UInt8]] = [
            "scheme1-when-unlocked": try SealedBlob.seal(secret, identity: Self.identity, accessibility: .whenUnlocked,
                                                          classKey: ClassKeys.derive(masterKey: master, for: .whenUnlocked)),
            "scheme1-after-first-unlock-internet": try SealedBlob.seal(
                secret, identity: Self.internetIdentity, accessibility: .afterFirstUnlock,
                classKey: ClassKeys.derive(masterKey: master, for: .afterFirstUnlock)),
            "scheme2-or-presence-current-set": try GatedBlob.seal(
                secret, identity: Self.identity, accessibility: .whenUnlocked, accessControl: 1 << 0 | 1 << 3 | 1 << 14,
                classKey: classPair.publicKey, gates: gates, combination: .any),
            "scheme2-and-presence-current-set": try GatedBlob.seal(
                secret, identity: Self.identity, accessibility: .whenUnlocked, accessControl: 1 << 0 | 1 << 3 | 1 << 15,
                classKey: classPair.publicKey, gates: gates, combination: .all),
            "scheme2-presence-when-unlocked-this-device-only": try GatedBlob.seal(
                secret, identity: Self.identity, accessibility: .whenUnlockedThisDeviceOnly, accessControl: 1 << 0,
                classKey: devicePair.publicKey, gates: [gates[0]], combination: .any),
        ]
        let vectors = Vectors(masterKey: hex(master), recoveryKey: text(try RecoveryKey.format(recoveryKey)),
                              presencePublicKey: hex(presence.publicKey), currentSetPublicKey: hex(currentSet.publicKey),
                              blobs: blobs.mapValues(hex))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(vectors).write(to: URL(fileURLWithPath: Self.folder + "/vectors.json"))
        try? fm.removeItem(atPath: store.lockPath)
    }

    // MARK: - Helpers

    /// A private copy of the frozen keychain folder (KeyStore wants 0700 folders and 0600 files of its
    /// owner, which a checkout does not keep), and the vectors.
    private func loadKeychain() throws -> (KeyStore, Vectors) {
        let data = try Data(contentsOf: URL(fileURLWithPath: Self.folder + "/vectors.json"))
        let vectors = try JSONDecoder().decode(Vectors.self, from: data)
        let copy = try makeTemporaryFolder(self) + "/keygate"
        try FileManager.default.copyItem(atPath: Self.folder + "/keychain", toPath: copy)
        for path in [copy, copy + "/protectors"] { chmod(path, 0o700) }
        for file in ["keys.json", "protectors/login.json", "protectors/recovery.json", "protectors/host.json"] {
            XCTAssertTrue(FileManager.default.fileExists(atPath: copy + "/" + file), "the frozen keychain lacks \(file)")
            chmod(copy + "/" + file, 0o600)
        }
        return (KeyStore(directory: copy), vectors)
    }

    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func hex(_ bytes: SecureBytes) -> String { hex(bytes.unprotectedCopy()) }
    private func text(_ bytes: SecureBytes) -> String { String(decoding: bytes.unprotectedCopy(), as: UTF8.self) }

    private func unhex(_ text: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = try XCTUnwrap(text.index(index, offsetBy: 2, limitedBy: text.endIndex))
            bytes.append(try XCTUnwrap(UInt8(text[index..<next], radix: 16), "not hex: \(text[index..<next])"))
            index = next
        }
        return bytes
    }
}
