// What each Apple-layer test class runs on: a keychain in this process on the real stack
// (InProcessKeychain: gnome-keyring on the private session bus, pam_matrix, the kernel
// keyring), a service of the test's own, and the person typing, scripted through
// KeygateSecurity's internal prompter seam. Subclasses name their service prefix and the
// services their tests write, which tearDown empties.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport
import XCTest

class AppleStackTestCase: XCTestCase {
    /// The start of each test's service name ("sec-test" → "sec-test-1a2b3c4d").
    class var servicePrefix: String { "apple-test" }

    private(set) var environment: InProcessKeychain?
    var password: String { environment?.password ?? "" }
    private(set) var service = ""
    var person = ScriptedPrompter([])

    override func setUpWithError() throws {
        environment = try InProcessKeychain()
        service = "\(Self.servicePrefix)-\(UUID().uuidString.prefix(8))"
        person = ScriptedPrompter([password])
        KeygateSecurityConfiguration.prompter = person
    }

    /// Deletes the items of `services`, then puts back the prompter and the environment.
    func tearDown(deleting services: [String]) {
        for s in services {
            _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(service: s))
        }
        KeygateSecurityConfiguration.prompter = nil
        environment?.tearDown()
    }
}
