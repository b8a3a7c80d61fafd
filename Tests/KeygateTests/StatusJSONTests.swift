// `keygate status --json` encodes KeychainStatus (its Codable conformance, through the CLI's
// order-keeping JSONOutputEncoder) instead of rebuilding its fields by hand. These prove the
// output is the same, byte for byte, as the hand-built JSON it replaced: the same keys in the
// same order, null for every absent value, the derived storeAdvice, and the same escaping.
@testable import Keygate
import XCTest
@testable import KeygateCLI

final class StatusJSONTests: XCTestCase {
    func test_statusJSON_isByteForByteTheHandBuiltObject() throws {
        let s = sample()
        let expected = #"{"user":"alice","dataDirectory":"/home/alice/.local/share/keygate","initialized":true,"# +
            #""unlocked":true,"secondsUntilLock":290,"lockAfter":300,"afterFirstUnlockAvailable":true,"# +
            #""cachedKeys":[{"name":"keygate:1000:master","secondsLeft":290},{"name":"keygate:1000:afu","secondsLeft":null}],"# +
            #""store":"gnome-keyring","collection":"Login \"main\"\n\u0001","collectionLocked":false,"storeError":null,"# +
            #""storeKind":"secret-service","storeReason":"chosen by KEYGATE_STORE=secret-service","storeAdvice":null,"# +
            #""passwordKDF":"argon2id13, 2 passes, 64 MiB","loginStale":false,"reuseDuration":300,"reuseScope":"tty:/dev/pts/1","# +
            #""lockoutSecondsLeft":42,"failedAttempts":0}"#
        XCTAssertEqual(try StatusCommand.json(s), expected)
        XCTAssertEqual(try StatusCommand.json(s), Self.handBuilt(s))
    }

    func test_statusJSON_matchesTheHandBuiltObject_withNullsAndStoreAdvice() throws {
        var s = sample()
        s.unlocked = false
        s.secondsUntilLock = nil
        s.cachedKeys = []
        s.store = nil
        s.collection = nil
        s.collectionLocked = nil
        s.storeError = "no Secret Service answered"
        s.passwordKDF = nil
        s.loginStale = true
        s.lockoutSecondsLeft = nil
        s.failedAttempts = nil
        XCTAssertNotNil(s.storeMismatchAdvice, "the derived advice is part of the output")
        let json = try StatusCommand.json(s)
        XCTAssertEqual(json, Self.handBuilt(s))
        XCTAssertTrue(json.contains(#""cachedKeys":[],"#), json)
        XCTAssertTrue(json.contains(#""secondsUntilLock":null,"#), json)
        XCTAssertTrue(json.contains(#""storeAdvice":"this keychain's items are in the Secret Service"#), json)

        s.storeKind = nil
        s.storeReason = nil
        XCTAssertEqual(try StatusCommand.json(s), Self.handBuilt(s))
    }

    private func sample() -> KeychainStatus {
        KeychainStatus(
            user: "alice", dataDirectory: "/home/alice/.local/share/keygate", initialized: true, unlocked: true,
            secondsUntilLock: 290, afterFirstUnlockAvailable: true,
            cachedKeys: [.init(name: "keygate:1000:master", secondsLeft: 290), .init(name: "keygate:1000:afu", secondsLeft: nil)],
            store: "gnome-keyring", collection: "Login \"main\"\n\u{01}", collectionLocked: false, storeError: nil,
            storeKind: "secret-service", storeReason: "chosen by KEYGATE_STORE=secret-service", lockAfter: 300,
            passwordKDF: "argon2id13, 2 passes, 64 MiB", loginStale: false, reuseDuration: 300, reuseScope: "tty:/dev/pts/1",
            lockoutSecondsLeft: 42, failedAttempts: 0)
    }

    /// The hand-built object `status --json` printed before it encoded the type (kept as the reference).
    private static func handBuilt(_ s: KeychainStatus) -> String {
        func opt(_ v: UInt64?) -> String { v.map(String.init) ?? "null" }
        let keys = s.cachedKeys.map { JSON.object([("name", JSON.string($0.name)), ("secondsLeft", opt($0.secondsLeft))]) }
        return JSON.object([
            ("user", JSON.string(s.user)), ("dataDirectory", JSON.string(s.dataDirectory)),
            ("initialized", String(s.initialized)), ("unlocked", String(s.unlocked)),
            ("secondsUntilLock", opt(s.secondsUntilLock)), ("lockAfter", String(s.lockAfter)),
            ("afterFirstUnlockAvailable", String(s.afterFirstUnlockAvailable)),
            ("cachedKeys", "[" + keys.joined(separator: ",") + "]"),
            ("store", s.store.map(JSON.string) ?? "null"), ("collection", s.collection.map(JSON.string) ?? "null"),
            ("collectionLocked", s.collectionLocked.map { String($0) } ?? "null"),
            ("storeError", s.storeError.map(JSON.string) ?? "null"),
            ("storeKind", s.storeKind.map(JSON.string) ?? "null"), ("storeReason", s.storeReason.map(JSON.string) ?? "null"),
            ("storeAdvice", s.storeMismatchAdvice.map(JSON.string) ?? "null"),
            ("passwordKDF", s.passwordKDF.map(JSON.string) ?? "null"),
            ("loginStale", String(s.loginStale)),
            ("reuseDuration", String(s.reuseDuration)), ("reuseScope", JSON.string(s.reuseScope)),
            ("lockoutSecondsLeft", s.lockoutSecondsLeft.map { String($0) } ?? "null"),
            ("failedAttempts", s.failedAttempts.map { String($0) } ?? "null"),
        ])
    }
}
