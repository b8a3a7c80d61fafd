// The provider matrix on kwalletd5 (KDE Frameworks 5.103 on Debian 12, its Secret Service API
// on) under Xvfb, its wallet opened by the login key as pam_kwallet5 does, then unlocked for
// Secret Service clients through Unlock and its prompt (scripts/provider-session).
import Foundation
import XCTest
@testable import KeygateCore
@testable import KeygateStorage
import KeygateTestSupport

final class KWalletStoreTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus

    // MARK: - who answers, and prompts

    func test_unlockPrompt_unlocksThroughTheProvidersPrompt_whenTheWalletWasOpenedByTheLoginKey() throws {
        try ProviderMatrix.own(.kWallet) { matrix in try matrix.unlockPrompt_unlocksThroughTheProvidersPrompt { try matrix.session.pamOpenWallet() } }
    }
}
