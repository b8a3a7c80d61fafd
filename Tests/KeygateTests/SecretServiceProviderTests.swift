// Who answers org.freedesktop.secrets, told from the owner's /proc/PID/comm, the advice each
// provider gets, the unlock-prompt setting, and the provider version read from a dpkg status
// file. (The providers themselves are tested live in KeePassXCStoreTests, KWalletStoreTests
// and GnomeKeyringProviderTests.)
import Foundation
import XCTest
@testable import Keygate
@testable import KeygateAuthentication
@testable import KeygateCore
@testable import KeygateStorage

final class SecretServiceProviderTests: XCTestCase {
    func test_provider_fromComm_recognisesEachDaemon_evenCutTo15Bytes() {
        XCTAssertEqual(SecretServiceProvider(command: "gnome-keyring-d\n"), .gnomeKeyring)
        XCTAssertEqual(SecretServiceProvider(command: "keepassxc\n"), .keePassXC)
        XCTAssertEqual(SecretServiceProvider(command: "kwalletd5\n"), .kWallet)
        XCTAssertEqual(SecretServiceProvider(command: "kwalletd6\n"), .kWallet)
        XCTAssertEqual(SecretServiceProvider(command: "ksecretd\n"), .kWallet)
        XCTAssertEqual(SecretServiceProvider(command: "oo7-daemon\n"), .other("oo7-daemon"))
        XCTAssertEqual(SecretServiceProvider(command: ""), .unknown)
        XCTAssertEqual(SecretServiceProvider(pid: 0), .unknown)
    }

    func test_provider_ofThisProcess_isReadFromProc() {
        XCTAssertNotEqual(SecretServiceProvider(pid: UInt32(getpid())), .unknown)
    }

    func test_lockedMessage_givesEachProvidersOwnAdvice_afterTheCommonPrefix() {
        let cases: [(SecretServiceProvider, String)] = [
            (.gnomeKeyring, "restart gnome-keyring-daemon with --unlock"),
            (.keePassXC, "unlock the database in KeePassXC"),
            (.kWallet, "open the wallet"),
            (.other("oo7-daemon"), "unlock it in oo7-daemon"),
        ]
        for (provider, advice) in cases {
            let error = SecretServiceFailure.locked(provider)
            XCTAssertEqual(error.code, .interactionNotAllowed)
            XCTAssertTrue(error.message.hasPrefix(SecretServiceFailure.lockedPrefix), error.message)
            XCTAssertTrue(error.message.contains(advice), error.message)
        }
        XCTAssertFalse(SecretServiceFailure.locked(.keePassXC).message.contains("gnome-keyring"))
    }

    func test_unlockPromptSetting_defaultsToAuto_andRefusesOtherValues() throws {
        XCTAssertEqual(try KeygateEnvironment([:]).unlockPrompt.get(), .auto)
        XCTAssertEqual(try KeygateEnvironment(["KEYGATE_UNLOCK_PROMPT": ""]).unlockPrompt.get(), .auto)
        XCTAssertEqual(try KeygateEnvironment(["KEYGATE_UNLOCK_PROMPT": "never"]).unlockPrompt.get(), .never)
        XCTAssertThrowsError(try KeygateEnvironment(["KEYGATE_UNLOCK_PROMPT": "no"]).unlockPrompt.get()) { error in
            XCTAssertEqual((error as? KeychainError)?.code, .param)
            XCTAssertTrue((error as? KeychainError)?.message.contains("auto, never") ?? false)
        }
        XCTAssertFalse(UnlockPromptSetting.never.allows(.keePassXC, display: false))
        XCTAssertTrue(UnlockPromptSetting.auto.allows(.kWallet, display: false), "kwalletd shows its own windows")
    }

    func test_version_isReadFromTheDpkgStatusStanzaOfTheProvidersPackage() throws {
        let file = NSTemporaryDirectory() + "kg-dpkg-status-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try """
            Package: keepassxc-full
            Version: 9.9

            Package: keepassxc
            Status: install ok installed
            Version: 2.7.4+dfsg.1-2

            Package: gnome-keyring
            Version: 42.1-1+b2
            """.write(toFile: file, atomically: true, encoding: .utf8)

        XCTAssertEqual(SecretServiceRoundTripCheck.version(of: .keePassXC, statusFile: file), "2.7.4+dfsg.1-2")
        XCTAssertEqual(SecretServiceRoundTripCheck.version(of: .gnomeKeyring, statusFile: file), "42.1-1+b2")
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .kWallet, statusFile: file))
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .unknown, statusFile: file))
    }

    /// kwalletrc's "Prompt on Open", read as KConfig writes it: only in [Wallet], spaces around
    /// the key and value ignored; absent elsewhere.
    func test_kWalletSetting_readsTheKeyOfItsGroupOnly() {
        let text = "[Auto Allow]\nPrompt on Open=true\n\n[Wallet]\r\nEnabled=true\n Prompt on Open = True \r\n[Other]\n"
        XCTAssertEqual(SecretServiceConnection.kWalletSetting("Prompt on Open", inGroup: "Wallet", of: text), "true")
        XCTAssertNil(SecretServiceConnection.kWalletSetting("Close When Idle", inGroup: "Wallet", of: text))
        XCTAssertEqual(SecretServiceConnection.kWalletSetting("Prompt on Open", inGroup: "Auto Allow", of: text), "true")
        XCTAssertNil(SecretServiceConnection.kWalletSetting("Prompt on Open", inGroup: "Wallet", of: "Prompt on Open=true\n"))
    }
}
