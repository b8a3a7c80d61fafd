// The base class of the wrapper suites in Suites/. They are written as the wrappers' own
// XCTest suites are, with nothing about Keygate in them, so they need a keychain that is
// already set up and unlocked, as a developer's is. KeygateSecurityTests.WrapperSuiteRunTests
// gives them one (KEYGATE_WRAPPER_SUITE_RUN) and runs each suite twice in a row on it, then
// once more with no askpass and no terminal. Run alone, they skip and say so.
import Foundation
import XCTest

class WrapperSuiteCase: XCTestCase {
    /// Whether a person could be asked for a password in this run (an askpass program is set:
    /// the runs have no terminal). Without one, items with access control fail at once with
    /// errSecInteractionNotAllowed, and items without it never ask.
    var canPrompt: Bool { ProcessInfo.processInfo.environment["KEYGATE_ASKPASS"].map { !$0.isEmpty } ?? false }

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard ProcessInfo.processInfo.environment["KEYGATE_WRAPPER_SUITE_RUN"] == "1" else {
            throw XCTSkip("run by KeygateSecurityTests.WrapperSuiteRunTests, which gives the suite an unlocked keychain")
        }
    }
}
