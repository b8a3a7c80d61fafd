// Who answers org.freedesktop.secrets, told from the owner's /proc/PID/comm, the advice each
// provider gets, the unlock-prompt setting, and the provider version asked of dpkg-query
// (a stand-in and the real one). (The providers themselves are tested live in KeePassXCStoreTests, KWalletStoreTests
// and GnomeKeyringProviderTests.)
import Foundation
import KeygateTestSupport
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

    /// A stand-in dpkg-query in a scratch folder: records its arguments, then runs `body`.
    private func fakeDpkgQuery(_ body: String) throws -> (program: String, arguments: String, folder: String) {
        let folder = NSTemporaryDirectory() + "kg-dpkg-query-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let program = folder + "/dpkg-query", arguments = folder + "/arguments"
        try "#!/bin/sh\nprintf '%s|' \"$@\" >'\(arguments)'\n\(body)\n".write(toFile: program, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program)
        return (program, arguments, folder)
    }

    func test_version_isAskedOfDpkgQuery_forTheProvidersPackage() throws {
        let fake = try fakeDpkgQuery("printf '2.7.4+dfsg.1-2'")
        defer { try? FileManager.default.removeItem(atPath: fake.folder) }
        XCTAssertEqual(SecretServiceRoundTripCheck.version(of: .keePassXC, dpkgQuery: fake.program), "2.7.4+dfsg.1-2")
        XCTAssertEqual(try String(contentsOfFile: fake.arguments, encoding: .utf8), "-W|-f|${Version}|keepassxc|",
                       "one package, its version field only, no shell between")
        XCTAssertEqual(SecretServiceRoundTripCheck.version(of: .gnomeKeyring, dpkgQuery: fake.program), "2.7.4+dfsg.1-2")
        XCTAssertEqual(try String(contentsOfFile: fake.arguments, encoding: .utf8), "-W|-f|${Version}|gnome-keyring|")
    }

    /// Not installed (dpkg-query exits 1 with "no packages found"), installed with no version,
    /// dpkg-query missing, or a provider with no Debian package: no version, and doctor names the provider alone.
    func test_version_isNil_whenThePackageIsNotInstalled_orDpkgQueryIsMissing() throws {
        let absent = try fakeDpkgQuery("echo \"dpkg-query: no packages found matching $4\" >&2; exit 1")
        defer { try? FileManager.default.removeItem(atPath: absent.folder) }
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .kWallet, dpkgQuery: absent.program))
        let empty = try fakeDpkgQuery("exit 0")
        defer { try? FileManager.default.removeItem(atPath: empty.folder) }
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .kWallet, dpkgQuery: empty.program))
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .keePassXC, dpkgQuery: "/nonexistent/dpkg-query"))
        let never = try fakeDpkgQuery("exit 0")
        defer { try? FileManager.default.removeItem(atPath: never.folder) }
        XCTAssertNil(SecretServiceRoundTripCheck.version(of: .unknown, dpkgQuery: never.program))
        XCTAssertFalse(FileManager.default.fileExists(atPath: never.arguments), "no package to ask about: not started")
    }

    /// The real dpkg-query on this Debian host, for the gnome-keyring the tests run.
    func test_version_ofTheInstalledGnomeKeyring_comesFromTheRealDpkgQuery() throws {
        try Requirement.require(FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-query")
                                && FileManager.default.isExecutableFile(atPath: "/usr/bin/gnome-keyring-daemon"),
                                "dpkg-query and gnome-keyring (scripts/install-deps)")
        let version = try XCTUnwrap(SecretServiceRoundTripCheck.version(of: .gnomeKeyring))
        XCTAssertNotNil(version.range(of: #"^([0-9]+:)?[0-9][A-Za-z0-9.+~-]*$"#, options: .regularExpression),
                        "a Debian version: \(version)")
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
