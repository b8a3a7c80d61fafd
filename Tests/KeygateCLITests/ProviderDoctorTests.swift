// `keygate doctor`'s Secret Service round trip with the real binary against each real provider
// alone on a private bus (ProviderSession: scripts/provider-session): it creates, reads and
// deletes a throwaway item, names the provider and its version, and leaves nothing behind.
// With prompts refused, as a client that does not complete them would (KEYGATE_TEST_REFUSE_PROMPTS=1,
// debug builds only), KeePassXC's prompted writes fail the check with KeePassXC's own advice.
import Foundation
import KeygateTestSupport
import XCTest

final class ProviderDoctorTests: XCTestCase, OutsideTheEmbeddedPass {
    static let outsideTheEmbeddedPass = EmbeddedPassExemption.ownProviderBus
    private func doctor(_ session: ProviderSession, _ extra: [String: String] = [:]) throws -> ProcessResult {
        let home = session.folder + "/doctor-home"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        var env = session.environment
        env["HOME"] = home
        env.removeValue(forKey: "XDG_CONFIG_HOME")
        env.removeValue(forKey: "XDG_DATA_HOME")
        env["KEYGATE_STORE"] = "secret-service"
        for (key, value) in extra { env[key] = value }
        return try Subprocess.run([PackagePaths.keygateBinary, "doctor"], environment: env, timeout: 60)
    }

    private func line(_ check: String, in output: String) -> String {
        output.split(separator: "\n").first { $0.dropFirst(5).hasPrefix(check + ":") }.map(String.init) ?? ""
    }

    /// No item of the doctor's service is left in the default collection.
    private func assertNoThrowawayLeft(_ session: ProviderSession, file: StaticString = #filePath, line: UInt = #line) throws {
        let search = try session.gdbus("/org/freedesktop/secrets", "org.freedesktop.Secret.Service.SearchItems",
                                       ["{'service': 'keygate-doctor'}"])
        XCTAssertEqual(search.status, 0, search.err, file: file, line: line)
        XCTAssertEqual(search.out.trimmingCharacters(in: .whitespacesAndNewlines), "(@ao [], @ao [])", file: file, line: line)
    }

    func test_doctor_roundTrip_throughKeePassXCsPrompts_namesItAndItsVersion_andLeavesNothing() throws {
        let session = try ProviderSession(.keePassXC)
        defer { session.stop() }

        let r = try doctor(session)

        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("OK   secret-service:"), r.out + r.err)
        XCTAssertTrue(service.contains("provider KeePassXC 2.7"), service)
        XCTAssertTrue(service.contains("create, read and delete of a throwaway item work"), service)
        try assertNoThrowawayLeft(session)
    }

    /// KeePassXC as Debian installs it: the round trip reads through a new connection, as the
    /// next command would, so doctor sees that KeePassXC locks each item for each program and
    /// says which setting it is. The program that wrote the item deletes it (KeePassXC lets it),
    /// so nothing is left.
    func test_doctor_onKeePassXCsDefaults_readsThroughANewConnection_andNamesTheAccessSetting() throws {
        let session = try ProviderSession(.keePassXC, settings: ["PROVIDER_SESSION_DEFAULTS": "1"])
        defer { session.stop() }

        let r = try doctor(session)

        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("WARN secret-service: KeePassXC 2.7"), r.out + r.err)
        XCTAssertTrue(service.contains("locks each item for each program"), service)
        XCTAssertTrue(r.out.contains("\"Confirm when passwords are retrieved by clients\""), r.out)
        XCTAssertEqual(r.status, 0, r.out + r.err)
        try assertNoThrowawayLeft(session)
    }

    func test_doctor_failsWithKeePassXCAdvice_whenPromptsAreNotCompleted_asBeforeIssue21() throws {
        let session = try ProviderSession(.keePassXC)
        defer { session.stop() }

        let r = try doctor(session, ["KEYGATE_TEST_REFUSE_PROMPTS": "1"])

        XCTAssertEqual(r.status, 53, r.out + r.err)
        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("FAIL secret-service: KeePassXC 2.7"), r.out)
        XCTAssertTrue(service.contains("could not create a throwaway item"), service)
        XCTAssertTrue(r.out.contains("Keygate completes KeePassXC's prompts"), r.out)
        try assertNoThrowawayLeft(session)
    }

    func test_doctor_roundTrip_namesGnomeKeyringAndItsVersion() throws {
        let session = try ProviderSession(.gnomeKeyring)
        defer { session.stop() }

        let r = try doctor(session)

        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("OK   secret-service:"), r.out + r.err)
        XCTAssertTrue(service.contains("provider gnome-keyring 42"), service)
        try assertNoThrowawayLeft(session)
    }

    func test_doctor_roundTrip_namesKWalletAndItsVersion() throws {
        let session = try ProviderSession(.kWallet)
        defer { session.stop() }

        let r = try doctor(session)

        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("OK   secret-service:"), r.out + r.err)
        XCTAssertTrue(service.contains("provider KWallet 5.103"), service)
        try assertNoThrowawayLeft(session)
    }

    /// kwalletd5 needs QCA's OpenSSL plugin (libqca-qt5-2-plugins) for libsecret's encrypted
    /// sessions: doctor names the package when the plugin is missing, and says OK when it is there.
    func test_doctor_onKWallet_namesTheQCAPluginPackage_exactlyWhenItIsMissing() throws {
        let session = try ProviderSession(.kWallet)
        defer { session.stop() }
        let plugins = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib")) ?? []
        let installed = plugins.contains { FileManager.default.fileExists(atPath: "/usr/lib/\($0)/qt5/plugins/crypto/libqca-ossl.so") }

        let r = try doctor(session)

        let parts = line("provider-parts", in: r.out)
        if installed {
            XCTAssertTrue(parts.hasPrefix("OK   provider-parts: KWallet: QCA's OpenSSL plugin is installed"), r.out)
        } else {
            XCTAssertTrue(parts.hasPrefix("WARN provider-parts: KWallet: QCA's OpenSSL plugin"), r.out)
            XCTAssertTrue(r.out.contains("install libqca-qt5-2-plugins"), r.out)
        }
    }

    func test_doctor_onGnomeKeyring_hasNoProviderPartsLine() throws {
        let session = try ProviderSession(.gnomeKeyring)
        defer { session.stop() }

        let r = try doctor(session)

        XCTAssertTrue(line("secret-service", in: r.out).hasPrefix("OK   secret-service:"), r.out)
        XCTAssertEqual(line("provider-parts", in: r.out), "", r.out)
    }

    func test_doctor_onALockedKeePassXC_warnsWithKeePassXCsAdvice_andWritesNothing() throws {
        let session = try ProviderSession(.keePassXC)
        defer { session.stop() }
        try session.lockDefaultCollection()

        let r = try doctor(session)

        let service = line("secret-service", in: r.out)
        XCTAssertTrue(service.hasPrefix("WARN secret-service:"), r.out + r.err)
        XCTAssertTrue(service.contains("(KeePassXC) is locked"), service)
        XCTAssertTrue(r.out.contains("unlock the database in KeePassXC"), r.out)
        XCTAssertFalse(r.out.contains("gnome-keyring"), r.out)
        try assertNoThrowawayLeft(session)
    }
}
