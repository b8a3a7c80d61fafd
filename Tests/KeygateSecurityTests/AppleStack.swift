// What each Apple-layer test class runs on: a keychain in this process on the real stack
// (InProcessKeychain: gnome-keyring on the private session bus, pam_matrix, the kernel
// keyring), a service of the test's own, and the person typing, scripted through
// KeygateSecurity's internal prompter seam. A class's setUp starts one, its tearDown ends it.
import Foundation
import Keygate
@testable import KeygateSecurity
import KeygateTestSupport

enum AppleStack {
    /// A fresh keychain, a service named `prefix`-<8 random characters>, and the person who
    /// types its password once, answering KeygateSecurity's prompts.
    static func start(servicePrefix prefix: String) throws -> (InProcessKeychain, String, ScriptedPrompter) {
        let keychain = try InProcessKeychain()
        let service = "\(prefix)-\(UUID().uuidString.prefix(8))"
        let person = ScriptedPrompter([keychain.password])
        KeygateSecurityConfiguration.prompter = person
        return (keychain, service, person)
    }

    /// Deletes the items of `services`, then puts back the prompter and the environment.
    static func end(_ keychain: InProcessKeychain?, deleting services: [String]) {
        for s in services {
            _ = try? KeychainOperations(prompter: ScriptedPrompter([])).delete(matching: ItemQuery(service: s))
        }
        KeygateSecurityConfiguration.prompter = nil
        keychain?.tearDown()
    }
}
