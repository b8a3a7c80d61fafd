// The fixture the SecItem tests share (AccessGroupKeyTests, SynchronizableKeyTests,
// WriteThenReadStressTests): an in-process keychain whose scripted person knows its password, a
// fresh service name a test whose items are deleted after it, and the pass's store restored
// afterwards (make check runs these classes again with KEYGATE_STORE=embedded, and a test may
// switch to the embedded store itself). Each subclass keeps its own query builders; this holds
// only what they would otherwise each write again.
import Foundation
import Keygate
@testable import KeygateSecurity
@testable import KeygateStorage
import KeygateTestSupport
import XCTest

class SecItemKeyTestCase: XCTestCase {
    var environment: InProcessKeychain?
    var service = ""
    var person = ScriptedPrompter([])
    private let passStore = ProcessInfo.processInfo.environment["KEYGATE_STORE"]

    /// Starts each test's service name, so an item a failed test leaves behind names its class.
    class var servicePrefix: String { "key" }

    /// How many times the scripted person can type the password before it runs out of answers.
    class var passwordAnswers: Int { 1 }

    override func setUpWithError() throws {
        let keychain = try InProcessKeychain()
        environment = keychain
        service = "\(Self.servicePrefix)-\(UUID().uuidString.prefix(8))"
        person = ScriptedPrompter(Array(repeating: keychain.password, count: Self.passwordAnswers))
        KeygateSecurityConfiguration.prompter = person
    }

    override func tearDownWithError() throws {
        _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(service: service))
        KeygateSecurityConfiguration.prompter = nil
        if let passStore { setenv("KEYGATE_STORE", passStore, 1) } else { unsetenv("KEYGATE_STORE") }
        environment?.tearDown()
    }

    /// Every matching secret, in creation order; none when the search fails.
    func secrets(_ q: [String: Any]) -> [String] {
        var result: AnyObject?
        let all = q.merging([kSecReturnData as String: true, kSecMatchLimit as String: kSecMatchLimitAll]) { $1 }
        guard SecItemCopyMatching(all as CFDictionary, &result) == errSecSuccess else { return [] }
        return (result as? [Data] ?? []).map { String(decoding: $0, as: UTF8.self) }
    }
}
