// The provider matrix on KeePassXC (2.7.4 on Debian 12) under Xvfb, its Secret Service
// integration on and the test database's root group exposed (scripts/provider-session).
// KeePassXC answers every CreateItem and Item.Delete with a prompt, even with its
// confirmations off: these tests prove Keygate completes them.
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class KeePassXCStoreTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    // MARK: - who answers, and prompts

    /// KeePassXC's default "Unlock before search" holds a search of a locked database until its
    /// unlock dialog is answered. With the unlock prompt allowed, the held search becomes
    /// Keygate's own unlock prompt, whose window is announced and waited for; with it off, the
    /// locked database is found before any search is sent (a held search would time out after the
    /// deadline, with KeePassXC's unlock window opened anyway), and reported at once.
    func test_unlockBeforeSearch_aHeldSearch_becomesTheUnlockPrompt_orSaysWhy() throws {
        let session = try ProviderSession(.keePassXC, settings: ["PROVIDER_SESSION_UNLOCK_BEFORE_SEARCH": "true"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session)
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "held"), label: "held")
        try matrix.store().create(attributes, blob: [1], replace: false)
        try matrix.store().lockDefaultCollection()

        var started = ContinuousClock.now
        XCTAssertThrowsError(try matrix.store(deadline: .seconds(1), unlockPrompt: .never)
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)) { error in
            let error = error as? KeychainError
            XCTAssertEqual(error?.code, .interactionNotAllowed, error?.message ?? "")
            XCTAssertTrue(error?.message.hasPrefix("the default keyring collection is locked (KeePassXC): unlock the database") ?? false,
                          error?.message ?? "")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .milliseconds(900), "found before the search's 1 s deadline")
        started = ContinuousClock.now
        XCTAssertThrowsError(try matrix.store(deadline: .seconds(1), unlockPrompt: .auto, windowLimit: .seconds(3))
            .search(ItemQuery(exactly: attributes.identity), loadBlobs: true)) { error in
            let error = error as? KeychainError
            XCTAssertEqual(error?.code, .interactionNotAllowed, error?.message ?? "")
            XCTAssertTrue(error?.message.contains("a KeePassXC window waited 3 s for an answer to unlock the default collection") ?? false,
                          error?.message ?? "")
        }
        XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
    }

    /// As Debian installs it (ItemStoreMatrixTests runs the contract so, as `keepassxc-defaults`):
    /// an item another program wrote is locked for this store's connection, a new client, until
    /// a person answers KeePassXC's Access Request window, once; then the read goes on.
    func test_debianDefaults_anItemAnotherClientWrote_isReadThroughTheAccessRequestWindow() throws {
        let session = try ProviderSession(.keePassXC, settings: ["PROVIDER_SESSION_DEFAULTS": "1"])
        defer { session.stop() }
        let matrix = ProviderMatrix(session: session, unlockPrompt: .auto)
        let attributes = ItemAttributes(identity: .generic(service: matrix.tag, account: "other"), label: "other")
        try matrix.store().create(attributes, blob: [3, 5], replace: false)
        let person = try WindowAnswerer(display: session.display, [WindowAnswerer.Answer(name: "Access Request", keys: ["Return"])])
        defer { person.stop() }

        XCTAssertEqual(try matrix.store().search(ItemQuery(exactly: attributes.identity), loadBlobs: true).map(\.blob), [[3, 5]])
        person.stop()  // it records a window once its keys are pressed: after the read may have gone on
        XCTAssertEqual(person.answered.filter { $0.contains("Access Request") }.count, 1, "\(person.answered)")
    }

    func test_unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow() throws {
        try ProviderMatrix.own(.keePassXC) { try $0.unlockPrompt_unlocksWithThePasswordTypedIntoItsWindow(named: "Unlock") }
    }
}
